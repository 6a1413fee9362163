-- bench.synthetic_history: every provider's offers over $n_days days ending on $end.
-- BY NAME: the SELECT's column names say where each value goes (the table's columns are defined
-- once, in warehouse/sql/schema.sql); columns it does not name stay NULL.
INSERT INTO price_snapshots BY NAME
WITH providers AS (
    SELECT generate_subscripts($providers, 1) - 1 AS p, unnest($providers) AS provider
),
offers AS (
    SELECT p, provider, o, CAST(hash(p, o, 'gpuprice-bench') >> 1 AS BIGINT) AS h  -- 63 bits: signed maths
    FROM providers, range($offers_per_provider) r(o)
),
offer_attrs AS (
    SELECT o.p, o.provider, o.o, o.h, g.slug, g.memory_gb, g.base_usd,
        [1, 1, 2, 4, 8][1 + (o.h >> 8) % 5] AS gpu_count,
        CASE WHEN (o.h >> 16) % 10 < 6 THEN 'on_demand' WHEN (o.h >> 16) % 10 < 8 THEN 'spot' ELSE 'reserved' END AS tier,
        (o.provider = 'runpod' AND (o.h >> 24) % 2 = 1) AS community,
        (o.provider = 'runpod' AND (o.h >> 26) % 4 = 0) AS lowest_now,
        [1, 3, 6, 12, 36][1 + (o.h >> 28) % 5] AS term,
        ['us-east-1', 'us-west-2', 'eu-north-1', 'eu-west-1', NULL][1 + (o.h >> 32) % 5] AS region,
        -- 60% of offers always existed; the rest appear between 30 days and ~5.5 years ago
        CASE WHEN (o.h >> 36) % 10 < 6 THEN 1000000 ELSE 30 + (o.h >> 40) % 2000 END AS born_age,
        -- 10% were withdrawn at some point in the last four years
        CASE WHEN (o.h >> 48) % 10 = 0 THEN 1 + (o.h >> 52) % 1460 ELSE 0 END AS gone_age,
        14 + (o.h >> 56) % 57 AS step_days,
        (o.h >> 60) % 4 = 0 AS flaky,  -- a quarter of offers miss about one snapshot in 40
        0.75 + ((o.h >> 12) % 50) / 100.0 AS provider_factor
    FROM offers o JOIN _bench_gpus g ON g.idx = o.h % $n_gpus
    -- one offer per warehouse offer key (OFFER_KEY plus the price basis): a second draw of the same
    -- key would be the same offer under another sku, which the warehouse merges by design
    QUALIFY row_number() OVER (
        PARTITION BY o.provider, g.slug, gpu_count, community, region, lowest_now,
            CASE WHEN lowest_now AND tier = 'reserved' THEN 'on_demand' ELSE tier END,
            CASE WHEN tier = 'reserved' AND NOT lowest_now THEN term END
        ORDER BY o.o
    ) = 1
),
days AS (
    SELECT range AS age, CAST($end AS DATE) - CAST(range AS INTEGER) AS snapshot_date FROM range($n_days)
),
priced AS (
    SELECT d.snapshot_date, a.*,
        round(a.base_usd * a.provider_factor
              * CASE a.tier WHEN 'spot' THEN 0.55 WHEN 'reserved' THEN 0.8 ELSE 1.0 END
              * (1 + ((hash(a.h, (d.age + a.o) // a.step_days) % 21)::DOUBLE - 10) / 200), 4) AS price
    FROM days d, offer_attrs a
    WHERE d.age < a.born_age AND d.age >= a.gone_age AND NOT (a.flaky AND hash(a.h, d.age) % 40 = 0)
)
SELECT snapshot_date, provider,
    provider || '-' || slug || '-' || gpu_count || 'x-' || o AS sku,
    slug AS gpu, upper(replace(slug, '-', ' ')) AS gpu_raw, gpu_count, memory_gb AS vram_gb,
    CASE WHEN lowest_now AND tier = 'reserved' THEN 'on_demand' ELSE tier END AS tier,
    community,
    CASE WHEN tier = 'reserved' AND NOT lowest_now THEN term END AS commitment_months,
    region,
    greatest(price, 0.01) AS usd_per_gpu_hour,
    CASE WHEN provider = 'runpod' THEN NULL ELSE round(greatest(price, 0.01) * gpu_count, 4) END AS usd_per_instance_hour,
    8.0 * gpu_count AS vcpus, 64.0 * gpu_count AS ram_gb, 500.0 * gpu_count AS storage_gb,
    CASE WHEN provider = 'runpod' THEN (h >> 20) % 3 <> 0 END AS available,
    NULL AS effective_from, 'archive' AS source,
    md5(provider || snapshot_date::VARCHAR) || md5(snapshot_date::VARCHAR || provider) AS raw_sha256,
    provider || '/1' AS parser_version,
    CAST(snapshot_date AS TIMESTAMP) + INTERVAL 6 HOUR AS ingested_at,
    CASE WHEN lowest_now THEN 'lowest_now' ELSE 'list' END AS price_basis
FROM priced
ORDER BY snapshot_date, provider, o
