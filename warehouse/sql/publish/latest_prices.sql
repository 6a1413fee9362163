-- latest_prices stored in the copy: each provider's newest day (a few thousand rows read, not
-- the history), and the analysts' view over it.
CREATE OR REPLACE TABLE main.latest_price_rows AS SELECT * FROM main.v_latest_prices;
CREATE OR REPLACE VIEW analytics.latest_prices AS SELECT * FROM main.latest_price_rows;
