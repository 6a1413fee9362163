-- A row that carries the warehouse's newest date ($newest; the daily series runs to it) into the
-- scratch database when the window's providers end earlier; its own offer is never kept.
INSERT INTO main.price_snapshots (snapshot_date, provider, sku, gpu, gpu_raw, gpu_count,
    tier, community, usd_per_gpu_hour, source, ingested_at, price_basis, observed_on)
VALUES ($newest, '~newest', '-', 'unknown', '-', 1, 'on_demand', false, 1, 'public_report', now(), 'list', $newest)
