"""analytics.cloud_vs_hyperscaler, cheapest_region and capacity_watch, and the report section."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from gpuprice.reports import comparison
from gpuprice.warehouse.connection import connect_writer
from gpuprice.warehouse.views import create_views

DAY = dt.date(2026, 10, 6)


def _ranking(con: duckdb.DuckDBPyConnection, rank: int, provider: str, cost: float, **extra: object) -> None:
    row: dict[str, object] = dict(
        snapshot_date=DAY,
        workload="w",
        rank=rank,
        provider=provider,
        sku=f"{provider}-sku",
        gpu="h100-sxm",
        gpu_count=8,
        nodes=1,
        tier="on_demand",
        community=False,
        usd_per_gpu_hour=2.0,
        sharding="fsdp",
        per_gpu_gb=40.0,
        tokens_per_sec_per_gpu=1000.0,
        mfu=0.4,
        hours=10.0,
        run_cost_usd=cost * 5,
        total_cost_usd=cost * 10,
        cost_per_checkpoint_usd=cost,
        computed_at=dt.datetime(2026, 10, 6, tzinfo=dt.UTC),
        excluded_by=[],
    )
    row.update(extra)
    names = ", ".join(row)
    con.execute(
        f"INSERT INTO workload_rankings ({names}) VALUES ({', '.join('?' * len(row))})", list(row.values())
    )


def _warehouse(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    con = connect_writer(tmp_path / "w.duckdb")
    create_views(con)
    return con


def test_best_offer_per_kind_with_its_cost_per_checkpoint(tmp_path: Path) -> None:
    con = _warehouse(tmp_path)
    _ranking(con, 1, "runpod", 10.0)
    _ranking(con, 2, "lambda", 11.0)
    _ranking(con, 3, "vastai", 12.0, community=True)
    _ranking(con, 4, "aws", 25.0, region="us-east-1")
    _ranking(con, 5, "azure", 30.0, region="eastus")
    _ranking(con, 6, "oci", 5.0, excluded_by=["deadline"])  # beyond the workload's limits: not a best offer
    rows = con.execute(
        "SELECT provider_kind, provider, region, cost_per_checkpoint_usd, ratio_to_best "
        "FROM analytics.cloud_vs_hyperscaler ORDER BY cost_per_checkpoint_usd"
    ).fetchall()
    assert rows == [
        ("gpu_cloud", "runpod", None, 10.0, 1.0),
        ("marketplace", "vastai", None, 12.0, 1.2),
        ("hyperscaler", "aws", "us-east-1", 25.0, 2.5),
    ]
    section = comparison.cloud_vs_hyperscaler(con, "w", DAY)
    assert [(r.kind_label, r.provider, r.region) for r in section] == [
        ("GPU cloud", "runpod", None),
        ("Marketplace", "vastai", None),
        ("Hyperscaler", "aws", "us-east-1"),
    ]
    assert comparison.cloud_vs_hyperscaler(con, "w", None) == []


def _snapshot(con: duckdb.DuckDBPyConnection, day: dt.date, **extra: object) -> None:
    row: dict[str, object] = dict(
        snapshot_date=day,
        provider="aws",
        sku="p5.48xlarge",
        gpu="h100-sxm",
        gpu_raw="NVIDIA H100",
        gpu_count=8,
        tier="on_demand",
        community=False,
        usd_per_gpu_hour=6.88,
        source="archive",
        ingested_at=dt.datetime(2026, 10, 6, tzinfo=dt.UTC),
        observed_on=day,
        price_basis="list",
    )
    row.update(extra)
    names = ", ".join(row)
    con.execute(
        f"INSERT INTO price_snapshots ({names}) VALUES ({', '.join('?' * len(row))})", list(row.values())
    )


def test_cheapest_region_names_the_region_and_counts_them(tmp_path: Path) -> None:
    con = _warehouse(tmp_path)
    con.execute(
        "INSERT INTO provider_runs VALUES (?, 'aws', 'archive', 'success', 3, 0, 0, NULL, NULL, now(), now(), ?, 'structured', NULL)",
        [DAY, DAY],
    )
    for region, price in (("eu-north-1", 7.3616), ("us-east-1", 6.88), ("us-west-2", 6.88)):
        _snapshot(con, DAY, region=region, usd_per_gpu_hour=price)
    assert con.execute(
        "SELECT cheapest_region, regions, CAST(usd_per_gpu_hour AS DOUBLE), CAST(dearest_region_usd_per_gpu_hour AS DOUBLE) FROM analytics.cheapest_region"
    ).fetchall() == [("us-east-1", 3, 6.88, 7.3616)]


def test_no_capacity_seen_for_seven_days(tmp_path: Path) -> None:
    con = _warehouse(tmp_path)
    start = DAY - dt.timedelta(days=10)
    for n in range(11):
        day = start + dt.timedelta(days=n)
        in_stock = n < 2  # stock on the first two days only
        _snapshot(
            con,
            day,
            provider="runpod",
            sku="NVIDIA H200",
            gpu="h200-sxm",
            gpu_raw="H200 SXM",
            gpu_count=1,
            available=in_stock,
            capacity=1 if in_stock else 0,
            price_basis="lowest_now",
        )
        _snapshot(
            con,
            day,
            provider="vastai",
            sku="H100 SXM x1",
            gpu_raw="H100 SXM",
            gpu_count=1,
            community=True,
            available=True,
            capacity=3,
        )
    watch = comparison.no_capacity(con)
    assert [(w.provider, w.gpu_raw, w.last_capacity_date, w.window_days) for w in watch] == [
        ("runpod", "H200 SXM", start + dt.timedelta(days=1), 7)
    ]
