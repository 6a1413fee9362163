-- The fingerprint of the view definitions last created (views are rebuilt when it changes).
CREATE TABLE IF NOT EXISTS main.view_fingerprint (fingerprint VARCHAR NOT NULL)
