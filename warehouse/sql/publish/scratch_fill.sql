-- The scratch database's other inputs: the runs of the providers taking part (which days were
-- scraped), the restarted offers with their restart, carried page and cutoff, and their stored
-- periods from the restart on that reach the earliest cutoff (every period from a restart on
-- does, but an offer's last period ended before its cutoff: publish/closed_periods adds those).
INSERT INTO _analytics_scratch.main.provider_runs BY NAME
SELECT r.* FROM main.provider_runs r SEMI JOIN _pub_window w ON w.provider = r.provider;
CREATE TABLE _analytics_scratch.main.restart AS
SELECT r.offer_key, r.restart, r.carry, c.cutoff FROM _pub_restart r JOIN _pub_cut c ON c.provider = r.provider;
CREATE TABLE _analytics_scratch.main.old_periods AS
SELECT s.* FROM _analytics_copy.main.price_periods s
JOIN _pub_restart r ON r.offer_key = s.offer_key
WHERE coalesce(s.valid_to, DATE '9999-12-31') >= (SELECT min(cutoff) FROM _pub_cut) AND s.valid_from >= r.restart;
