-- The buying guide's comparison: per date and workload, the best-ranked offer (within the
-- workload's limits) among GPU clouds, hyperscalers (Azure, AWS, OCI) and the marketplace
-- (Vast.ai), with its cost per checkpoint and how it compares with the best of the three.
CREATE OR REPLACE VIEW main.v_cloud_vs_hyperscaler AS
WITH kinds(provider, provider_kind) AS (VALUES {provider_kinds}),
best AS (
    SELECT r.snapshot_date, r.workload, k.provider_kind, r.rank, r.provider, r.sku, r.gpu,
        r.gpu_count, r.nodes, r.tier, r.community, r.commitment_months, r.region, r.price_basis,
        r.usd_per_gpu_hour, r.hours, r.total_cost_usd, r.cost_per_checkpoint_usd, r.observed_on
    FROM main.workload_rankings r JOIN kinds k USING (provider)
    WHERE coalesce(len(r.excluded_by), 0) = 0
    QUALIFY row_number() OVER (
        PARTITION BY r.snapshot_date, r.workload, k.provider_kind ORDER BY r.rank
    ) = 1
)
SELECT *,
    round(cost_per_checkpoint_usd / min(cost_per_checkpoint_usd) OVER (PARTITION BY snapshot_date, workload), 4)
        AS ratio_to_best
FROM best
