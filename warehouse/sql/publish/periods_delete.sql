-- In the copy, the restarted offers' periods from their restart on that publish/old_periods read
-- (those that reach $cutoff, the earliest cutoff: a constant, so the scan drops the others
-- before the join) and no new period continues (publish/periods_kept: those are updated in
-- place), before publish/derived_replace inserts the other new ones.
DELETE FROM _analytics_copy.main.price_periods t
WHERE coalesce(t.valid_to, DATE '9999-12-31') >= $cutoff
  AND t.valid_from >= (SELECT min(restart) FROM _pub_restart)
  AND EXISTS (SELECT 1 FROM _pub_restart r WHERE r.offer_key = t.offer_key AND t.valid_from >= r.restart)
  AND NOT EXISTS (SELECT 1 FROM _analytics_scratch.main.kept_periods k WHERE k.offer_key = t.offer_key AND k.valid_from = t.valid_from)
