-- The staged rows stored sorted (analysts filter by the leading columns: few row groups read).
CREATE OR REPLACE TABLE main.{identifier:table} AS
SELECT * FROM main.{identifier:staged} ORDER BY {identifiers:order_by}
