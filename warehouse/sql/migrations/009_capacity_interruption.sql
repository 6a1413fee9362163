-- Version 9: availability beyond a yes/no, and AWS's spot interruption bucket, per snapshot row.
--
-- capacity: how much the source says is rentable now (Runpod's largest available GPU count, the
-- number of Vast.ai listings behind a statistic); interruption_bucket: the Spot Instance
-- Advisor's label ("<5%" ... ">20%") of an AWS spot offer. Both NULL where unstated.
-- Idempotent like 008.
ALTER TABLE price_snapshots ADD COLUMN IF NOT EXISTS capacity INTEGER;
ALTER TABLE price_snapshots ADD COLUMN IF NOT EXISTS interruption_bucket VARCHAR;
-- Rankings say where the offer runs (its cheapest region) and the spot rate they costed.
ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS region VARCHAR;
ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS preemption_rate_per_node_hour DOUBLE;
ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS preemption_rate_source VARCHAR;
