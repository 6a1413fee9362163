-- Version 10: the Dagster run that recorded a provider's outcome: the CLI reads its runs' outcomes
-- by it. NULL for rows recorded before (or outside a run). Idempotent like 008.
ALTER TABLE provider_runs ADD COLUMN IF NOT EXISTS run_id VARCHAR;
