-- The restarted offers' stored periods from their restart on, into the scratch database: those
-- that reach $cutoff, the earliest cutoff (every period from a restart on does, but an offer's
-- last period ended before its cutoff: publish/closed_periods adds those). $cutoff is a constant,
-- so the scan drops the other periods before reading their columns.
CREATE TABLE _analytics_scratch.main.old_periods AS
SELECT s.* FROM _analytics_copy.main.price_periods s
JOIN _pub_restart r ON r.offer_key = s.offer_key
WHERE coalesce(s.valid_to, DATE '9999-12-31') >= $cutoff AND s.valid_from >= r.restart
