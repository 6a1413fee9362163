-- What one Dagster run ($run_id) recorded per provider and date, oldest date first.
SELECT provider, snapshot_date, status, offers, rejected, unknown_gpus, error, parse_strategy, observed_on
FROM main.provider_runs WHERE run_id = $run_id ORDER BY snapshot_date, provider
