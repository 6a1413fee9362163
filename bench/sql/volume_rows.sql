-- One span of days of the volume history (ages $age_lo to $age_hi before $end), in date order.
INSERT INTO price_snapshots (
    snapshot_date, provider, sku, gpu, gpu_raw, gpu_count, vram_gb, tier, community,
    commitment_months, region, usd_per_gpu_hour, usd_per_instance_hour, vcpus, ram_gb, storage_gb,
    available, effective_from, source, raw_sha256, parser_version, ingested_at, price_basis, observed_on)
WITH days AS (
    SELECT range AS age, CAST($end AS DATE) - CAST(range AS INTEGER) AS snapshot_date
    FROM range($age_lo, $age_hi)
),
pages AS (  -- one page (its sha256) per provider and day
    SELECT d.*, p.provider,
        md5(p.provider || d.snapshot_date::VARCHAR) || md5(d.snapshot_date::VARCHAR || p.provider) AS raw_sha256
    FROM days d, (SELECT DISTINCT provider FROM _volume_offers) p
),
listed AS (
    SELECT d.snapshot_date, d.raw_sha256, o.*,
        greatest(round(o.base * (1 + ((hash(o.h, (d.age + o.o) // o.step_days) % 21)::DOUBLE - 10) / 200), 4), 0.01)
            AS price
    FROM pages d JOIN _volume_offers o
      ON d.provider = o.provider AND d.age < o.born_age AND d.age >= o.gone_age
     AND NOT (o.flaky AND hash(o.h, d.age) % 40 = 0)
)
SELECT snapshot_date, provider, sku, gpu, gpu_raw, gpu_count, vram_gb, tier, community,
    commitment_months, region, price, round(price * gpu_count, 4),
    8.0 * gpu_count, 64.0 * gpu_count, 500.0 * gpu_count,
    NULL, NULL, 'archive', raw_sha256, provider || '/1',
    CAST(snapshot_date AS TIMESTAMP) + INTERVAL 6 HOUR, 'list', snapshot_date
FROM listed
