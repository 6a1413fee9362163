-- A whole build's end: the periods sorted by GPU, and the views reading the stored tables.
CREATE OR REPLACE TABLE main.price_periods AS
SELECT * FROM main.price_periods ORDER BY gpu, provider, valid_from, offer_key;
DROP TABLE IF EXISTS _whole_markers;
DROP TABLE IF EXISTS _whole_chunk;
