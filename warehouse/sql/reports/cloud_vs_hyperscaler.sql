SELECT provider_kind, provider, sku, gpu, gpu_count, nodes, tier, community, region, price_basis,
    usd_per_gpu_hour, hours, total_cost_usd, cost_per_checkpoint_usd, ratio_to_best
FROM v_cloud_vs_hyperscaler WHERE workload = ? AND snapshot_date = ?
ORDER BY cost_per_checkpoint_usd, provider_kind
