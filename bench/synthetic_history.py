"""A synthetic multi-year price history, generated inside DuckDB (one INSERT ... SELECT, no Python loop).

Shape, chosen to look like the real warehouse at scale: six providers, a fixed pool of offers
per provider (GPU from the catalog, 1/2/4/8 GPUs, on-demand / spot / reserved, a few regions,
Runpod community and "lowest now" rows), one snapshot per provider per day. Offers come and go
(some appear late, some disappear, some miss the odd snapshot), and each offer's price moves in steps every two to ten weeks,
so ``price_history`` collapses days into periods as it does on real data.

Everything is defined by the offer's age in days before ``end`` (not by its position from the
start), so a one-year and a five-year history agree on their shared last year: the newest day
has the same offers at any length, which makes the 1-year and 5-year timings comparable.
Rows are inserted in date order, as daily runs append them.
"""

from __future__ import annotations

import datetime as dt
import math

import duckdb
import pandas as pd

from gpuprice.models.catalog import get_gpu, gpu_slugs, plausible_price_band
from gpuprice.scrapers.offer import PROVIDERS

# Offers per provider in the pool; about 80% are listed on a given day. 470 gives ~4.0 M rows over
# five years (6 x 470 x 1826 x ~0.78), the scale the issue asks for.
DEFAULT_OFFERS_PER_PROVIDER = 470
DEFAULT_END = dt.date(2026, 10, 6)


def _gpu_table() -> pd.DataFrame:
    """Catalog GPUs with a plausible list price: the geometric middle of the catalog's price band."""
    rows = []
    for index, slug in enumerate(gpu_slugs()):
        low, high = plausible_price_band(slug)
        rows.append(
            {
                "idx": index,
                "slug": slug,
                "memory_gb": get_gpu(slug).memory_gb,
                "base_usd": math.sqrt(low * high),
            }
        )
    return pd.DataFrame(rows)


_GENERATE_SQL = """
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
    FROM offers o JOIN $gpus g ON g.idx = o.h % $n_gpus
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
"""


def generate_history(
    con: duckdb.DuckDBPyConnection,
    *,
    days: int,
    end: dt.date = DEFAULT_END,
    offers_per_provider: int = DEFAULT_OFFERS_PER_PROVIDER,
) -> int:
    """Fill ``price_snapshots`` with ``days`` daily snapshots ending on ``end``; returns rows added."""
    if days < 1 or offers_per_provider < 1:
        raise ValueError("days and offers_per_provider must be >= 1")
    gpus = _gpu_table()
    before = con.execute("SELECT count(*) FROM price_snapshots").fetchall()[0][0]
    con.register("_bench_gpus", gpus)
    try:
        sql = _GENERATE_SQL.replace("$gpus", "_bench_gpus")
        con.execute(
            sql,
            {
                "providers": list(PROVIDERS),
                "offers_per_provider": offers_per_provider,
                "n_gpus": len(gpus),
                "end": end,
                "n_days": days,
            },
        )
    finally:
        con.unregister("_bench_gpus")
    # The daily run records each provider's successful run with its snapshot (latest_prices reads it).
    con.execute(
        """
        INSERT OR REPLACE INTO provider_runs (snapshot_date, provider, source, status, offers, rejected,
            unknown_gpus, error, parse_report, started_at, finished_at, observed_on)
        SELECT snapshot_date, provider, any_value(source), 'success', count(*), 0, 0, NULL, NULL, now(), now(),
            max(coalesce(observed_on, snapshot_date))
        FROM price_snapshots WHERE source IN ('scrape', 'archive') GROUP BY snapshot_date, provider
        """
    )
    con.execute("CHECKPOINT")
    return con.execute("SELECT count(*) FROM price_snapshots").fetchall()[0][0] - before
