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

from bench.sql_files import bench_sql
from gpuprice.models.catalog import get_gpu, gpu_slugs, plausible_price_band
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.warehouse import partition_fingerprints

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
    before = con.execute(bench_sql("snapshot_rows")).fetchall()[0][0]
    con.register("_bench_gpus", gpus)
    try:
        con.execute(
            bench_sql("synthetic_history"),
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
    con.execute(bench_sql("provider_runs_from_snapshots"))
    # rows written here, not by the product's writes: their partitions' fingerprints computed once
    partition_fingerprints.refresh_all(con)
    con.execute(bench_sql("checkpoint"))
    return con.execute(bench_sql("snapshot_rows")).fetchall()[0][0] - before
