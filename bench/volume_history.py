"""A synthetic history at all-region detail, generated inside DuckDB a month at a time.

Issue 38's scale: public trackers that keep the hyperscalers at region detail take in ~110,000
rows a day, ~200 M over five years. Shape: the seven non-hyperscalers as in
``bench.synthetic_history`` (a pool of offers each, ~80 % listed a day, no regions); AWS and
Azure a pool of offers each listed in part of their regions (AWS 33, Azure 44: the regions of
``scrapers/generated_archive``), sized so that the whole history has about ``rows`` rows; OCI
one region-less pool (Oracle states one price for all regions). Offers appear and disappear and
their prices move in steps (two to ten weeks), as in ``bench.synthetic_history``. Everything is
a function of the day's age before ``end``, so a one-year history is the five-year one's last
year. Rows go in in date order (one INSERT per month), as daily runs append them, so each
row group holds a few days and the date's zone maps prune.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

import duckdb

from bench.all_region_archive import AZURE_REGIONS
from bench.synthetic_history import DEFAULT_END, _gpu_table
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.scrapers.providers import aws

HYPERSCALER_REGIONS: dict[str, list[str]] = {
    "aws": list(aws.REGIONS.values()),
    "azure": [region for region, _ in AZURE_REGIONS],
}
REGION_SHARE = 0.6  # an offer is sold in about this share of its provider's regions
OTHER_OFFERS = 470  # per non-hyperscaler provider (bench.synthetic_history's pool)
CHUNK_DAYS = 31

_SQL = """
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
"""

_OFFERS_SQL = """
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
"""


def listed_share(days: int) -> float:
    """The expected share of a pool's offers listed on a day, averaged over ``days`` days (the
    born / gone / flaky rules of ``_OFFERS_SQL``: older days have fewer offers born yet)."""
    total = 0.0
    for age in range(days):
        born = 0.6 + 0.4 * min(max((2030 - age) / 2000, 0.0), 1.0)
        kept = 0.9 + 0.1 * min(age / 1460, 1.0)
        total += born * kept * (1 - 0.25 / 40)
    return total / days


def pool_sizes(rows: int, days: int) -> dict[str, int]:
    """Offers per provider so that ``days`` days hold about ``rows`` rows: the non-hyperscalers
    keep bench.synthetic_history's pool, OCI too; AWS and Azure share the rest half and half."""
    per_day = rows / days
    others = [p for p in PROVIDERS if p not in HYPERSCALER_REGIONS]
    share = listed_share(days)
    rest = max(per_day - len(others) * OTHER_OFFERS * share, 0.0)
    sizes = dict.fromkeys(others, OTHER_OFFERS)
    for provider, regions in HYPERSCALER_REGIONS.items():
        sizes[provider] = max(
            1, round(rest / len(HYPERSCALER_REGIONS) / (len(regions) * REGION_SHARE * share))
        )
    return sizes


def generate_volume_history(
    con: duckdb.DuckDBPyConnection,
    *,
    rows: int,
    days: int,
    end: dt.date = DEFAULT_END,
    pools: dict[str, int] | None = None,
    progress: Callable[[str], None] | None = None,
) -> int:
    """Fill ``price_snapshots`` (and ``provider_runs``) with ``days`` days ending on ``end`` at about
    ``rows`` rows; ``pools`` fixes the offers per provider (pass the five-year pools to a one-year
    history, so both agree on their shared year). Returns the rows added."""
    if days < 1 or rows < 1:
        raise ValueError("rows and days must be >= 1")
    sizes = pools or pool_sizes(rows, days)
    gpus = _gpu_table()
    before = con.execute("SELECT count(*) FROM price_snapshots").fetchall()[0][0]
    con.register("_volume_gpu_frame", gpus)
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE _volume_gpus AS SELECT * FROM _volume_gpu_frame")
    finally:
        con.unregister("_volume_gpu_frame")
    con.execute(
        _OFFERS_SQL,
        {
            "providers": list(sizes),
            "pool_sizes": list(sizes.values()),
            "region_providers": list(HYPERSCALER_REGIONS),
            "region_lists": list(HYPERSCALER_REGIONS.values()),
            "region_share": REGION_SHARE,
            "n_gpus": len(gpus),
        },
    )
    started = time.perf_counter()
    # oldest month first: rows arrive in date order
    for age_hi in range(days, 0, -CHUNK_DAYS):
        age_lo = max(age_hi - CHUNK_DAYS, 0)
        con.execute(_SQL, {"end": end, "age_lo": age_lo, "age_hi": age_hi})
        if progress is not None:
            done = days - age_lo
            progress(f"{done}/{days} days, {time.perf_counter() - started:.0f} s")
    con.execute(
        """
        INSERT OR REPLACE INTO provider_runs (snapshot_date, provider, source, status, offers, rejected,
            unknown_gpus, error, parse_report, started_at, finished_at, observed_on)
        SELECT snapshot_date, provider, 'archive', 'success', count(*), 0, 0, NULL, NULL, now(), now(), snapshot_date
        FROM price_snapshots WHERE source = 'archive' GROUP BY snapshot_date, provider
        """
    )
    con.execute("DROP TABLE _volume_offers")
    con.execute("DROP TABLE _volume_gpus")
    con.execute("CHECKPOINT")
    return con.execute("SELECT count(*) FROM price_snapshots").fetchall()[0][0] - before
