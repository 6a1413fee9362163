-- In the scratch database: the chunk's offers' periods and daily rows, by the warehouse's views.
CREATE TABLE main.new_periods AS
SELECT h.* FROM main.v_price_history h SEMI JOIN main.chunk_offers c ON c.offer_key = h.offer_key;
CREATE OR REPLACE VIEW main.v_price_history AS SELECT * FROM main.new_periods;
CREATE TABLE main.new_daily AS SELECT * FROM main.v_daily_prices;
