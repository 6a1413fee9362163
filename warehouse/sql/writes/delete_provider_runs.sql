-- provider_runs rows with these (provider, snapshot_date) keys, as two parallel lists.
DELETE FROM provider_runs WHERE (provider, snapshot_date) IN (
    SELECT unnest($providers::VARCHAR[]), unnest($dates::DATE[])
)
