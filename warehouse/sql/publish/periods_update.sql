-- In the copy, the stored periods a new one continues (publish/periods_kept) updated in place:
-- they keep their place in GPU order, so the appended periods that make the table sorted again
-- (publish/sort_periods) are only the new ones. $cutoff bounds the scan as in publish/old_periods.
UPDATE _analytics_copy.main.price_periods t
SET provider = k.provider, sku = k.sku, gpu = k.gpu, gpu_raw = k.gpu_raw, gpu_count = k.gpu_count,
    tier = k.tier, community = k.community, commitment_months = k.commitment_months, region = k.region,
    price_basis = k.price_basis, effective_from = k.effective_from, usd_per_gpu_hour = k.usd_per_gpu_hour,
    valid_to = k.valid_to, last_seen = k.last_seen, snapshots = k.snapshots, source = k.source
FROM _analytics_scratch.main.kept_periods k
WHERE coalesce(t.valid_to, DATE '9999-12-31') >= $cutoff AND k.offer_key = t.offer_key AND k.valid_from = t.valid_from
