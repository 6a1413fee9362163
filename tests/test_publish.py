"""Publishing: analysts read a copy that never blocks a run; Parquet export per date."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from conftest import D1, D2, make_offer
from gpuprice.warehouse.connection import connect_reader, connect_writer
from gpuprice.warehouse.publish import export_parquet, publish_analytics_copy
from gpuprice.warehouse.writes import replace_snapshot_partition

ANALYST = textwrap.dedent(
    """
    import sys, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)   # an analyst's open session
    print(con.execute("SELECT count(*) FROM main.price_snapshots").fetchone()[0], flush=True)
    sys.stdin.readline()                                 # hold the file open until told
    print(con.execute("SELECT count(*) FROM main.price_snapshots").fetchone()[0], flush=True)
    """
)


def _write(con, day, n):
    offers = [make_offer(sku=f"s{i}", usd_per_gpu_hour=1 + i) for i in range(n)]
    replace_snapshot_partition(
        con,
        provider="lambda",
        snapshot_date=day,
        offers=offers,
        source="archive",
        raw_sha256=None,
        parser_version=None,
    )


@pytest.mark.slow
def test_an_open_analyst_session_never_blocks_a_run(tmp_path: Path):
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    con = connect_writer(wh)
    _write(con, D1, 2)
    publish_analytics_copy(con, wh, copy)
    con.close()

    analyst = subprocess.Popen(
        [sys.executable, "-c", ANALYST, str(copy)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert analyst.stdout.readline().strip() == "2"
        # The next run writes the warehouse and replaces the copy while the analyst holds it.
        con = connect_writer(wh, wait_seconds=5)
        _write(con, D2, 3)
        publish_analytics_copy(con, wh, copy)
        con.close()
        analyst.stdin.write("\n")
        analyst.stdin.flush()
        assert analyst.stdout.readline().strip() == "2"  # the old session keeps its consistent view
    finally:
        analyst.communicate(timeout=30)
    assert analyst.returncode == 0
    fresh = connect_reader(copy)
    assert fresh.execute("SELECT count(*) FROM analytics.latest_prices").fetchone()[0] == 3
    fresh.close()


@pytest.mark.slow
def test_a_second_writer_waits_then_fails_clearly(tmp_path: Path):
    wh = tmp_path / "warehouse.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, duckdb; c = duckdb.connect(sys.argv[1]); print('ok', flush=True); "
            "sys.stdin.readline()",
            str(wh),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ok"
        from gpuprice.warehouse.connection import WarehouseBusy

        try:
            connect_writer(wh, wait_seconds=0.5)
        except WarehouseBusy as exc:
            assert "locked by another gpuprice run" in str(exc)
        else:  # pragma: no cover
            raise AssertionError("a second writer must not open a locked warehouse")
    finally:
        holder.communicate("\n", timeout=30)


def test_parquet_export_is_partitioned_by_snapshot_date(tmp_path: Path):
    con = connect_writer(tmp_path / "warehouse.duckdb")
    _write(con, D1, 2)
    _write(con, D2, 1)
    written = export_parquet(con, [D1, D2], tmp_path / "exports")
    assert [p.parent.name for p in written] == ["snapshot_date=2026-10-01", "snapshot_date=2026-10-02"]
    rows = duckdb.sql(
        f"SELECT snapshot_date, count(*) FROM read_parquet('{tmp_path}/exports/price_snapshots/*/*.parquet', "
        "hive_partitioning = true) GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    assert [(str(d), n) for d, n in rows] == [("2026-10-01", 2), ("2026-10-02", 1)]
    # Re-exporting a date rewrites it (no duplicates).
    export_parquet(con, [D1], tmp_path / "exports")
    assert len(list((tmp_path / "exports/price_snapshots/snapshot_date=2026-10-01").glob("*.parquet"))) == 1
    con.close()


def test_the_copy_serves_the_warehouses_history_views_from_stored_periods(tmp_path: Path):
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    con = connect_writer(wh)
    try:
        # Three offers on D1; on D2 the second one's price moves and the third is gone.
        for day, prices in ((D1, [1.0, 2.0, 3.0]), (D2, [1.0, 2.5])):
            offers = [
                make_offer(sku=f"s{i}", gpu_count=2**i, usd_per_gpu_hour=price)
                for i, price in enumerate(prices)
            ]
            replace_snapshot_partition(
                con,
                provider="lambda",
                snapshot_date=day,
                offers=offers,
                source="archive",
                raw_sha256=None,
                parser_version=None,
            )
        computed = {
            view: con.execute(f"SELECT * FROM analytics.{view} ORDER BY ALL").fetchall()
            for view in ("price_history", "daily_prices", "price_changes")
        }
        publish_analytics_copy(con, wh, copy)
    finally:
        con.close()
    reader = connect_reader(copy)
    try:
        # price_changes and daily_prices build on the periods: in the copy they read the stored ones.
        definition = reader.execute(
            "SELECT sql FROM duckdb_views() WHERE schema_name = 'main' AND view_name = 'v_price_history'"
        ).fetchone()[0]
        assert "price_periods" in definition
        for view, rows in computed.items():
            assert rows, view  # a price change, a dropped offer and days to carry forward
            assert reader.execute(f"SELECT * FROM analytics.{view} ORDER BY ALL").fetchall() == rows, view
    finally:
        reader.close()


@pytest.mark.slow
def test_publishing_a_long_history_spills_past_the_memory_cap_instead_of_failing(tmp_path: Path, monkeypatch):
    """The cap is a budget, not a limit on the history: a history whose derived series outgrow
    the cap (here ~4,200 rows per MB; at ~3,800 rows per MB `make bench`'s one-year publish ran out of
    its 400 MB before) is published by spilling into the home, which is left clean."""
    from bench.synthetic_history import generate_history
    from gpuprice.warehouse import connection

    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    con = connect_writer(wh)
    rows = generate_history(con, days=365, offers_per_provider=130)
    assert rows > 400_000
    monkeypatch.setattr(connection, "PUBLISH_MEMORY_LIMIT", "100MB")  # the publish step's connection
    publish_analytics_copy(con, wh, copy)
    con.close()
    analyst = connect_reader(copy)
    try:
        periods = analyst.execute("SELECT count(*) FROM main.price_periods").fetchone()[0]
        daily = analyst.execute("SELECT count(*) FROM main.daily_price_rows").fetchone()[0]
        assert periods > 1000 and daily >= rows * 0.9
        # the copy's stored periods are the view's, computed again on the warehouse itself
        assert analyst.execute("SELECT count(DISTINCT gpu) FROM analytics.price_history").fetchone()[0] > 5
    finally:
        analyst.close()
    spill = connection.spill_dir(wh)
    assert not spill.exists() or not any(spill.iterdir())
    # the two copies analytics.duckdb links to in turn, and no temp file
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [".analytics-copy-a.duckdb", ".analytics-copy-b.duckdb", "analytics.duckdb", "warehouse.duckdb"]
        + ([spill.name] if spill.exists() else [])
    )
