-- The restarted offers' daily rows from their daily_from, in the copy, replaced by the scratch
-- database's (a bound first: most rows are older than every daily_from and skip the join), and
-- their periods from the scratch database (the stored ones removed by publish/periods_delete,
-- those continued updated by publish/periods_update);
-- a carried offer's daily rows before its carried page relabelled.
DELETE FROM _analytics_copy.main.daily_price_rows t
WHERE t.date >= (SELECT min(daily_from) FROM _analytics_scratch.main.daily_from)
  AND EXISTS (SELECT 1 FROM _analytics_scratch.main.daily_from f WHERE f.offer_key = t.offer_key AND t.date >= f.daily_from);
INSERT INTO _analytics_copy.main.price_periods BY NAME
SELECT n.* FROM _analytics_scratch.main.new_periods n
ANTI JOIN _analytics_scratch.main.kept_periods k ON k.offer_key = n.offer_key AND k.valid_from = n.valid_from;
INSERT INTO _analytics_copy.main.daily_price_rows BY NAME
SELECT * FROM _analytics_scratch.main.new_daily ORDER BY gpu, date, provider, offer_key;
UPDATE _analytics_copy.main.daily_price_rows t SET sku = l.sku, gpu_raw = l.gpu_raw, source = l.source
FROM _analytics_scratch.main.relabel l
WHERE t.date >= (SELECT min(restart) FROM _analytics_scratch.main.relabel)
  AND l.offer_key = t.offer_key AND t.date >= l.restart AND t.date < l.carry;
