-- Per provider: newest successful snapshot and the date of its page, the latest attempt
-- (its status and error: NULL when it succeeded), and the age against the newest snapshot
-- date in the warehouse (the one notion of "now"), by the rule of warehouse/staleness.py.
CREATE OR REPLACE VIEW main.v_provider_freshness AS
WITH runs AS (
    SELECT provider,
        max(snapshot_date) FILTER (WHERE status = 'success') AS last_success_date,
        max(coalesce(observed_on, snapshot_date)) FILTER (WHERE status = 'success') AS last_observed_on,
        max(snapshot_date) AS last_attempt_date,
        -- a struct is never NULL, so a healthy latest run's NULL error is not skipped
        arg_max({'status': status, 'error': error}, snapshot_date) AS last_run,
        arg_max(offers, snapshot_date) FILTER (WHERE status = 'success') AS last_offers,
        arg_max(parse_strategy, snapshot_date) AS parse_strategy,
        arg_max(rejected, snapshot_date) AS rejected
    FROM main.provider_runs GROUP BY provider
),
newest AS (SELECT max(snapshot_date) AS d FROM main.provider_runs)
SELECT r.provider, r.last_success_date, r.last_observed_on, r.last_attempt_date,
    r.last_run.status AS last_status, r.last_run.error AS last_error, r.last_offers,
    (SELECT d FROM newest) AS as_of_date,
    (SELECT d FROM newest) - r.last_observed_on AS days_behind,
    -- Drift: the newest attempt's reader (structured / fallback) and its rejected rows.
    r.parse_strategy, r.rejected,
    (r.last_observed_on IS NULL OR r.last_run.status IS DISTINCT FROM 'success'
     OR (SELECT d FROM newest) - r.last_observed_on > {stale_after_days}) AS stale
FROM runs r
