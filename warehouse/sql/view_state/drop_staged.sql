DROP TABLE IF EXISTS main.{identifier:staged}
