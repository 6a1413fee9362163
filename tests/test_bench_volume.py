"""The volume benchmark (issue 38): the all-region history generator and the figure's machinery,
on tiny sizes. No timing is asserted."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pytest
from test_partition_fingerprints import assert_exact

from bench import warehouse_volume
from bench.volume_history import HYPERSCALER_REGIONS, OTHER_OFFERS, generate_volume_history, pool_sizes
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.warehouse.connection import connect_writer


def test_row_counts_read_like_people_write_them() -> None:
    assert warehouse_volume.parse_count("200M") == 200_000_000
    assert warehouse_volume.parse_count("1.5b") == 1_500_000_000
    assert warehouse_volume.parse_count("40_000") == 40_000
    with pytest.raises(ValueError):
        warehouse_volume.parse_count("0")


def test_pools_put_the_volume_on_the_hyperscalers_regions() -> None:
    sizes = pool_sizes(200_000_000, 1826)
    assert set(sizes) == set(PROVIDERS)
    assert all(sizes[p] == OTHER_OFFERS for p in PROVIDERS if p not in HYPERSCALER_REGIONS)
    assert sizes["aws"] > 4 * OTHER_OFFERS and sizes["azure"] > 4 * OTHER_OFFERS


def test_history_has_every_region_and_about_the_rows_asked(tmp_path: Path) -> None:
    con = connect_writer(tmp_path / "w.duckdb")
    try:
        rows = 3_000_000 * 20 // 365  # 20 days of a 3 M-row year
        added = generate_volume_history(con, rows=rows, days=20, end=dt.date(2026, 10, 6))
        assert math.isclose(added, rows, rel_tol=0.15)
        regions = dict(
            con.execute(
                "SELECT provider, count(DISTINCT region) FROM price_snapshots GROUP BY provider"
            ).fetchall()
        )
        assert regions["aws"] == len(HYPERSCALER_REGIONS["aws"]) == 33
        assert regions["azure"] == len(HYPERSCALER_REGIONS["azure"]) == 44
        assert regions["oci"] == 0 and regions["lambda"] == 0
        # one offer's regions: the same GPU, count and tier, each region its own row and price
        spread = con.execute(
            """SELECT count(*), count(DISTINCT usd_per_gpu_hour), count(DISTINCT gpu || tier || gpu_count)
               FROM price_snapshots WHERE provider = 'aws' AND snapshot_date = DATE '2026-10-06'
                 AND sku = (SELECT min(sku) FROM price_snapshots WHERE provider = 'aws')"""
        ).fetchall()[0]
        assert spread[0] > 5 and spread[1] > 1 and spread[2] == 1
        days = con.execute("SELECT count(DISTINCT snapshot_date) FROM provider_runs").fetchall()[0][0]
        assert days == 20
        # written beside the product's writes: the partitions' fingerprints filled all the same
        assert_exact(con)
    finally:
        con.close()


@pytest.mark.slow
def test_the_figure_runs_on_a_tiny_history(tmp_path: Path) -> None:
    figures = warehouse_volume.measure(300_000, repeats=1, days=(8, 3), workdir=tmp_path, query_timeout_s=300)
    names = {f.name for f in figures}
    for query in warehouse_volume.QUERIES:
        assert {f"volume.{query}_ms", f"volume.{query}_peak_rss_mb"} <= names
    for figure in figures:
        assert math.isfinite(figure.value) and figure.value > 0 and figure.baseline_value > 0
    best = next(f for f in figures if f.name == "volume.best_offer_per_workload_ms")
    query = best.details["five_years"]["query"]
    assert query["finished"] and query["result_rows"] >= 1 and query["offers"] > 0
    append = next(f for f in figures if f.name == "volume.append_and_publish_one_day_s")
    five = append.details["five_years"]
    assert five["appended_offers"] > 0 and "built_whole" not in five["delta"]  # an update, not a rebuild
    assert five["delta"]["partitions"] == len(five["rows_on_newest_day"])  # one new partition a provider
    rss = next(f for f in figures if f.name == "volume.latest_prices_peak_rss_mb")
    assert 20 < rss.value < 2000  # the query process's own peak, not the bench's
    assert five["appended_day"] == "2026-10-07"
    # a kept folder is reused: no history generated or built whole again, one more day appended
    again = warehouse_volume.measure(
        300_000, repeats=1, days=(8, 3), workdir=tmp_path, query_timeout_s=300, appends=2
    )
    append = next(f for f in again if f.name == "volume.append_and_publish_one_day_s")
    assert append.details["five_years"]["generate_s"] == five["generate_s"]
    assert [a["appended_day"] for a in append.details["five_years"]["appends"]] == [
        "2026-10-08",
        "2026-10-09",
    ]
    assert append.details["five_years"]["appended_day"] == "2026-10-09"  # the figure: the last day
    assert "built_whole" not in append.details["five_years"]["delta"]
    with pytest.raises(ValueError, match="other rows_requested"):
        warehouse_volume.measure(400_000, repeats=1, days=(8, 3), workdir=tmp_path)


@pytest.mark.slow
def test_without_a_workdir_the_warehouses_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warehouse_volume.tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv(warehouse_volume.DIR_VAR, raising=False)
    warehouse_volume.measure(20_000, repeats=1, days=(2, 1), publish=False, query_timeout_s=300)
    assert list(tmp_path.iterdir()) == []


def _processes_reading(path: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(path).encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc to find the query processes")
def test_a_query_past_its_timeout_is_stopped_with_everything_it_started(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    con = connect_writer(path)
    try:
        generate_volume_history(con, rows=20_000, days=2, end=dt.date(2026, 10, 6))
    finally:
        con.close()
    answer = warehouse_volume._query_in_process(
        "best_offer_per_workload", path, dt.date(2026, 10, 6), repeats=1, timeout_s=0.3
    )
    assert answer == {"ms": 300.0, "finished": False, "peak_rss_mb": None, "result_rows": None}
    assert _processes_reading(path) == []  # neither the launcher nor the query process is left
