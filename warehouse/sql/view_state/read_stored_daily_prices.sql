-- The published copy: the daily series (and the views built on it) read the stored, sorted rows.
CREATE OR REPLACE VIEW main.v_daily_prices AS SELECT * FROM main.daily_price_rows;
