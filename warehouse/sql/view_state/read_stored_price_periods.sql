-- The published copy: price_history (and the views built on it) read the stored, sorted periods.
CREATE OR REPLACE VIEW analytics.price_history AS SELECT * FROM main.price_periods;
CREATE OR REPLACE VIEW main.v_price_history AS SELECT * FROM main.price_periods;
