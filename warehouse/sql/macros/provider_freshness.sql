-- provider_freshness(as_of): per provider, as of a day, its newest successful snapshot and the
-- date of that snapshot's page, the latest attempt (its status and error: NULL when it
-- succeeded), and the age of its newest page on that day, stale by the rule of
-- warehouse/staleness.py. A table macro, so the rule is written once for every "as of":
-- the view v_provider_freshness asks it as of the newest snapshot date in the warehouse (the one
-- notion of "now"), the reports as of their week (queries/provider_freshness_as_of.sql). It is
-- stored in the database beside the views, so the published copy has it for analysts too.
CREATE OR REPLACE MACRO main.provider_freshness(as_of) AS TABLE
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
    FROM main.provider_runs WHERE snapshot_date <= as_of GROUP BY provider
)
SELECT r.provider, r.last_success_date, r.last_observed_on, r.last_attempt_date,
    r.last_run.status AS last_status, r.last_run.error AS last_error, r.last_offers,
    as_of AS as_of_date,
    as_of - r.last_observed_on AS days_behind,
    -- Drift: the newest attempt's reader (structured / fallback) and its rejected rows.
    r.parse_strategy, r.rejected,
    (r.last_observed_on IS NULL OR r.last_run.status IS DISTINCT FROM 'success'
     OR as_of - r.last_observed_on > {stale_after_days}) AS stale
FROM runs r
ORDER BY r.provider
