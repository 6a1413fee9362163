-- In the copy, the stored periods a new one continues (publish/periods_kept) updated in place:
-- they keep their place in GPU order, so the appended periods that make the table sorted again
-- (publish/sort_periods) are only the new ones. $cutoff bounds the scan as in publish/old_periods.
-- Only the columns a continued period can change are set, not the offer key's (they are the
-- join): setting those too made DuckDB's update 2-9 s instead of < 0.15 s on a 124 k-offer day
-- (bench/README). The price and basis can change: a day's partition replaced by a new page.
UPDATE _analytics_copy.main.price_periods t
SET sku = k.sku, gpu_raw = k.gpu_raw, effective_from = k.effective_from,
    usd_per_gpu_hour = k.usd_per_gpu_hour, price_basis = k.price_basis,
    valid_to = k.valid_to, last_seen = k.last_seen, snapshots = k.snapshots, source = k.source
FROM _analytics_scratch.main.kept_periods k
WHERE coalesce(t.valid_to, DATE '9999-12-31') >= $cutoff AND k.offer_key = t.offer_key AND k.valid_from = t.valid_from
