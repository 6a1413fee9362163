-- Every provider run up to $last, oldest first per provider, with the date of its page.
SELECT provider, snapshot_date, status, coalesce(observed_on, snapshot_date) FROM main.provider_runs
WHERE snapshot_date <= $last ORDER BY provider, snapshot_date
