-- Version 11: the throughput error band of each ranked offer (models/throughput_band.py): compute
-- hours at the band's fast and slow ends, and the total cost costed again at those hours.
-- NULL for rankings computed before. Idempotent like 008.
ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS hours_low DOUBLE;
ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS hours_high DOUBLE;
ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS total_cost_low_usd DOUBLE;
ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS total_cost_high_usd DOUBLE;
