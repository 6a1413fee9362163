-- The closed offers' stored periods from their restart on (their last period ended before the
-- earliest cutoff, $cutoff: publish/restarts), into the scratch database's old_periods; matched
-- on GPU and provider too, so the scan skips the row groups of other GPUs. Run only when there
-- are any.
INSERT INTO _analytics_scratch.main.old_periods BY NAME
SELECT s.* FROM _analytics_copy.main.price_periods s
JOIN (SELECT * FROM _pub_restart WHERE closed) r
  ON r.gpu = s.gpu AND r.provider = s.provider AND r.offer_key = s.offer_key
WHERE s.valid_to < $cutoff AND s.valid_from >= r.restart
