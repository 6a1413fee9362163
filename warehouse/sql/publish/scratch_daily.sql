-- In the scratch database: the restarted offers' daily rows from the date each must be written again.
CREATE TABLE main.new_daily AS
SELECT d.* FROM main.v_daily_prices d JOIN main.daily_from f ON f.offer_key = d.offer_key
WHERE d.date >= f.daily_from
