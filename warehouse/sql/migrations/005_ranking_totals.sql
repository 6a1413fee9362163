-- Version 5: rankings carry the run's total cost, when each price was observed and the limits an
-- offer breaks (planner). Idempotent, so it applies on top of any earlier version.
ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS total_cost_usd DOUBLE;
ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS observed_on DATE;
ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS excluded_by VARCHAR[];
-- Rows ranked before: the total is in cost_terms, and the price was seen on its snapshot date.
UPDATE workload_rankings
SET total_cost_usd = coalesce(total_cost_usd, TRY_CAST(json_extract(cost_terms, '$.total_usd') AS DOUBLE)),
    observed_on = coalesce(observed_on, price_snapshot_date);
