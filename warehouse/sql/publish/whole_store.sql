-- The chunk's periods and daily rows into the copy (the tables made on the first chunk).
CREATE TABLE IF NOT EXISTS main.price_periods AS FROM {analytics_scratch}.main.new_periods LIMIT 0;
CREATE TABLE IF NOT EXISTS main.daily_price_rows AS FROM {analytics_scratch}.main.new_daily LIMIT 0;
INSERT INTO main.price_periods BY NAME SELECT * FROM {analytics_scratch}.main.new_periods;
INSERT INTO main.daily_price_rows BY NAME
SELECT * FROM {analytics_scratch}.main.new_daily ORDER BY gpu, date, provider, offer_key;
