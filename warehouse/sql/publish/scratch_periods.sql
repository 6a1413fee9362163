-- In the scratch database: the restarted offers' periods from their restart, and the periods view
-- pointed at them (the daily series is built on them).
CREATE TABLE main.new_periods AS
SELECT h.* FROM main.v_price_history h JOIN main.restart r ON r.offer_key = h.offer_key
WHERE h.valid_from >= r.restart;
CREATE OR REPLACE VIEW main.v_price_history AS SELECT * FROM main.new_periods;
