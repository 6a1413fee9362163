SELECT rank, provider, sku, gpu, gpu_count, nodes, tier, community, commitment_months, price_basis,
    usd_per_gpu_hour, sharding, per_gpu_gb, tokens_per_sec_per_gpu, mfu, hours, run_cost_usd,
    total_cost_usd, cost_per_checkpoint_usd, CAST(cost_terms AS VARCHAR) AS cost_terms, warnings,
    price_snapshot_date, observed_on, coalesce(excluded_by, []) AS excluded_by,
    hours_low, hours_high, total_cost_low_usd, total_cost_high_usd
FROM workload_rankings WHERE workload = ? AND snapshot_date = ?
ORDER BY rank, cost_per_checkpoint_usd
