-- The scratch database's other inputs: the runs of the providers taking part (which days were
-- scraped: the views join them to the rows of their own provider and date only, so those from
-- the provider's window start on), and the restarted offers with their restart, carried page
-- and cutoff (their stored periods: publish/old_periods).
INSERT INTO _analytics_scratch.main.provider_runs BY NAME
SELECT r.* FROM main.provider_runs r JOIN _pub_window w ON w.provider = r.provider
WHERE w.start IS NULL OR r.snapshot_date >= w.start;
CREATE TABLE _analytics_scratch.main.restart AS
SELECT r.offer_key, r.restart, r.carry, c.cutoff FROM _pub_restart r JOIN _pub_cut c ON c.provider = r.provider;
