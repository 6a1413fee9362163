-- Per provider, as of $day: its newest success, the date of that page, the latest attempt (a
-- struct is never NULL, so a healthy latest run's NULL error is not skipped).
SELECT provider,
    max(snapshot_date) FILTER (WHERE status = 'success') AS last_success_date,
    max(coalesce(observed_on, snapshot_date)) FILTER (WHERE status = 'success') AS last_observed_on,
    max(snapshot_date) AS last_attempt_date,
    arg_max({'status': status, 'error': error}, snapshot_date) AS last_run,
    arg_max(offers, snapshot_date) FILTER (WHERE status = 'success') AS last_offers,
    arg_max(parse_strategy, snapshot_date) AS parse_strategy,
    arg_max(rejected, snapshot_date) AS rejected
FROM main.provider_runs WHERE snapshot_date <= $day GROUP BY provider ORDER BY provider
