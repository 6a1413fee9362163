-- In the copy, the restarted offers' periods from their restart on that publish/old_periods read
-- (those that reach $cutoff, the earliest cutoff: a constant, so the scan drops the others
-- before the join), before publish/derived_replace inserts their new ones.
DELETE FROM _analytics_copy.main.price_periods t
WHERE coalesce(t.valid_to, DATE '9999-12-31') >= $cutoff
  AND t.valid_from >= (SELECT min(restart) FROM _pub_restart)
  AND EXISTS (SELECT 1 FROM _pub_restart r WHERE r.offer_key = t.offer_key AND t.valid_from >= r.restart)
