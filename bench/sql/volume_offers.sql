-- The volume history's offers: per provider a pool, the hyperscalers' placed in part of their regions.
CREATE OR REPLACE TEMP TABLE _volume_offers AS
WITH pools AS (
    SELECT unnest($providers) AS provider, unnest($pool_sizes) AS pool
),
offers AS (
    SELECT provider, o, CAST(hash(provider, o, 'gpuprice-volume') >> 1 AS BIGINT) AS h
    FROM pools, range(pool) r(o)
),
regions AS (
    SELECT provider, unnest(regions) AS region FROM (SELECT unnest($region_providers) AS provider,
        unnest($region_lists) AS regions)
),
placed AS (  -- hyperscaler offers in part of their regions; the others without a region
    SELECT o.*, r.region, CAST(hash(o.h, r.region) >> 1 AS BIGINT) AS rh
    FROM offers o JOIN regions r USING (provider)
    WHERE hash(o.h, r.region) % 1000 < $region_share * 1000
    UNION ALL
    SELECT o.*, NULL AS region, o.h AS rh FROM offers o
    WHERE o.provider NOT IN (SELECT provider FROM regions)
)
SELECT p.provider, p.o, p.rh AS h, p.region, g.slug AS gpu, upper(replace(g.slug, '-', ' ')) AS gpu_raw,
    g.memory_gb AS vram_gb,
    [1, 1, 2, 4, 8][1 + (p.h >> 8) % 5] AS gpu_count,
    CASE WHEN (p.h >> 16) % 10 < 6 THEN 'on_demand' WHEN (p.h >> 16) % 10 < 8 THEN 'spot' ELSE 'reserved' END AS tier,
    (p.provider = 'runpod' AND (p.h >> 24) % 2 = 1) AS community,
    CASE WHEN (p.h >> 16) % 10 >= 8 THEN [1, 3, 6, 12, 36][1 + (p.h >> 28) % 5] END AS commitment_months,
    p.provider || '-' || g.slug || '-' || [1, 1, 2, 4, 8][1 + (p.h >> 8) % 5] || 'x-' || p.o AS sku,
    g.base_usd * (0.75 + ((p.h >> 12) % 50) / 100.0)
        * CASE WHEN (p.h >> 16) % 10 < 6 THEN 1.0 WHEN (p.h >> 16) % 10 < 8 THEN 0.55 ELSE 0.8 END
        * CASE WHEN p.region IS NULL THEN 1.0 ELSE 1.0 + ((p.rh >> 20) % 40) / 100.0 END AS base,
    CASE WHEN (p.h >> 36) % 10 < 6 THEN 1000000 ELSE 30 + (p.h >> 40) % 2000 END AS born_age,
    CASE WHEN (p.h >> 48) % 10 = 0 THEN 1 + (p.h >> 52) % 1460 ELSE 0 END AS gone_age,
    14 + (p.h >> 56) % 57 AS step_days,
    (p.rh >> 60) % 4 = 0 AS flaky
FROM placed p JOIN _volume_gpus g ON g.idx = p.h % $n_gpus
