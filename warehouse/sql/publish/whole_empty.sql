-- A warehouse without price rows: the copy's derived tables, empty.
CREATE TABLE IF NOT EXISTS main.price_periods AS FROM main.v_price_history LIMIT 0;
CREATE TABLE IF NOT EXISTS main.daily_price_rows AS FROM main.v_daily_prices LIMIT 0;
