-- The restarted offers' periods from their restart and daily rows from their daily_from, in the
-- copy, replaced by the scratch database's (constant bounds first: most rows are older than every
-- restart and skip the join); a carried offer's daily rows before its carried page relabelled.
-- The periods replaced are those scratch_fill read as old_periods: the ones reaching the
-- earliest cutoff (publish/closed_delete removes the closed offers' last ones, when there are any).
DELETE FROM _analytics_copy.main.price_periods t
WHERE coalesce(t.valid_to, DATE '9999-12-31') >= (SELECT min(cutoff) FROM _pub_cut)
  AND t.valid_from >= (SELECT min(restart) FROM _pub_restart)
  AND EXISTS (SELECT 1 FROM _pub_restart r WHERE r.offer_key = t.offer_key AND t.valid_from >= r.restart);
DELETE FROM _analytics_copy.main.daily_price_rows t
WHERE t.date >= (SELECT min(daily_from) FROM _analytics_scratch.main.daily_from)
  AND EXISTS (SELECT 1 FROM _analytics_scratch.main.daily_from f WHERE f.offer_key = t.offer_key AND t.date >= f.daily_from);
INSERT INTO _analytics_copy.main.price_periods BY NAME SELECT * FROM _analytics_scratch.main.new_periods;
INSERT INTO _analytics_copy.main.daily_price_rows BY NAME
SELECT * FROM _analytics_scratch.main.new_daily ORDER BY gpu, date, provider, offer_key;
UPDATE _analytics_copy.main.daily_price_rows t SET sku = l.sku, gpu_raw = l.gpu_raw, source = l.source
FROM _analytics_scratch.main.relabel l
WHERE t.date >= (SELECT min(restart) FROM _analytics_scratch.main.relabel)
  AND l.offer_key = t.offer_key AND t.date >= l.restart AND t.date < l.carry;
