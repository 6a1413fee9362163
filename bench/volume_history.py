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
from bench.sql_files import bench_sql
from bench.synthetic_history import DEFAULT_END, _gpu_table
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.scrapers.providers import aws
from gpuprice.warehouse import partition_fingerprints

HYPERSCALER_REGIONS: dict[str, list[str]] = {
    "aws": list(aws.REGIONS.values()),
    "azure": [region for region, _ in AZURE_REGIONS],
}
REGION_SHARE = 0.6  # an offer is sold in about this share of its provider's regions
OTHER_OFFERS = 470  # per non-hyperscaler provider (bench.synthetic_history's pool)
CHUNK_DAYS = 31


def listed_share(days: int) -> float:
    """The expected share of a pool's offers listed on a day, averaged over ``days`` days (the
    born / gone / flaky rules of ``bench/sql/volume_offers.sql``: older days have fewer offers born yet)."""
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
    before = con.execute(bench_sql("snapshot_rows")).fetchall()[0][0]
    con.register("_volume_gpu_frame", gpus)
    try:
        con.execute(bench_sql("volume_gpus"))
    finally:
        con.unregister("_volume_gpu_frame")
    con.execute(
        bench_sql("volume_offers"),
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
        con.execute(bench_sql("volume_rows"), {"end": end, "age_lo": age_lo, "age_hi": age_hi})
        if progress is not None:
            done = days - age_lo
            progress(f"{done}/{days} days, {time.perf_counter() - started:.0f} s")
    con.execute(bench_sql("provider_runs_from_snapshots"))
    # rows written here, not by the product's writes: their partitions' fingerprints computed once
    partition_fingerprints.refresh_all(con)
    con.execute(bench_sql("volume_drop"))
    con.execute(bench_sql("checkpoint"))
    return con.execute(bench_sql("snapshot_rows")).fetchall()[0][0] - before
