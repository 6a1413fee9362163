-- price_periods sorted by GPU again, so one GPU's history reads a few row groups.
CREATE OR REPLACE TABLE main.price_periods AS
SELECT * FROM main.price_periods ORDER BY gpu, provider, valid_from, offer_key
