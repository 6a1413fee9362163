"""Warehouse: idempotent partitions, migrations, analyst views."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest

from conftest import D1, D2, D3, D4, make_offer, make_public_report_row
from gpuprice.scrapers.offer import ParseReport, RejectedRow
from gpuprice.warehouse.connection import connect_reader, connect_writer
from gpuprice.warehouse.schema import MIGRATIONS, SCHEMA_VERSION, V1_DDL, current_version
from gpuprice.warehouse.writes import replace_snapshot_partition


def write(con, provider, day, offers, report=None):
    return replace_snapshot_partition(
        con,
        provider=provider,
        snapshot_date=day,
        offers=offers,
        source="archive",
        raw_sha256="ab" * 32,
        parser_version="test/1",
        report=report,
    )


def table(con, sql, *params):
    return con.execute(sql, list(params)).fetchall()


# Every warehouse test runs on the embedded DuckDB file and on a DuckLake (a local catalog
# file plus a folder of Parquet data files), as GPUPRICE_WAREHOUSE selects.
ENGINES = ["duckdb", "ducklake"]


def use_engine(engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the CLI and the code location do with GPUPRICE_WAREHOUSE / GPUPRICE_WAREHOUSE_DATA."""
    from gpuprice.settings import Settings
    from gpuprice.warehouse import lake

    monkeypatch.setattr(lake, "_selected", None)  # restored after the test
    env = {
        "GPUPRICE_WAREHOUSE": f"ducklake:{tmp_path / 'catalog.ducklake'}",
        "GPUPRICE_WAREHOUSE_DATA": str(tmp_path / "lake"),
    }
    lake.select(*Settings.warehouse_engine(env if engine == "ducklake" else {}))


@pytest.fixture(params=ENGINES)
def con(request, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    use_engine(request.param, tmp_path, monkeypatch)
    c = connect_writer(tmp_path / "warehouse.duckdb")
    yield c
    c.close()


def test_rerunning_a_partition_replaces_it_without_duplicates(con):
    offers = [make_offer(), make_offer(sku="gpu_8x_h100_sxm", gpu_count=8, usd_per_gpu_hour=2.49)]
    report = ParseReport(provider="lambda", rejected=[RejectedRow(raw="A | B", reason="bad price")])
    assert write(con, "lambda", D1, offers, report) == 2
    first = table(con, "SELECT * EXCLUDE (ingested_at) FROM price_snapshots ORDER BY sku")
    assert write(con, "lambda", D1, offers, report) == 2
    assert table(con, "SELECT * EXCLUDE (ingested_at) FROM price_snapshots ORDER BY sku") == first
    assert table(con, "SELECT count(*) FROM quarantine") == [(1,)]
    # Another provider's and another day's partitions are untouched by a replace.
    write(con, "nebius", D1, [make_offer(provider="nebius", sku="h100")])
    write(con, "lambda", D2, offers[:1])
    write(con, "lambda", D1, offers[:1])
    assert table(
        con, "SELECT provider, snapshot_date, count(*) FROM price_snapshots GROUP BY ALL ORDER BY ALL"
    ) == [("lambda", D1, 1), ("lambda", D2, 1), ("nebius", D1, 1)]


def test_a_failed_write_leaves_the_previous_partition_whole(con, monkeypatch):
    from gpuprice.warehouse import writes

    write(con, "lambda", D1, [make_offer(), make_offer(sku="b", usd_per_gpu_hour=3.0)])

    def insert_then_die(con_, rows):
        con_.execute("DELETE FROM price_snapshots")  # damage inside the transaction...
        raise RuntimeError("disk full")  # ...then fail before COMMIT

    monkeypatch.setattr(writes, "_insert_offers", insert_then_die)
    with pytest.raises(RuntimeError):
        write(con, "lambda", D1, [make_offer(sku="c")])
    assert table(con, "SELECT sku FROM price_snapshots ORDER BY sku") == [("b",), ("gpu_1x_h100_sxm",)]


def test_prices_are_exact_decimals(con):
    write(con, "lambda", D1, [make_offer(usd_per_gpu_hour=5.4325)])
    (price,) = con.execute("SELECT usd_per_gpu_hour FROM price_snapshots").fetchone()
    assert str(price) == "5.4325"


def test_a_first_schema_warehouse_is_migrated_in_place(tmp_path: Path):
    path = tmp_path / "old.duckdb"
    old = duckdb.connect(str(path))
    old.execute(V1_DDL)
    old.execute(
        """INSERT INTO price_snapshots (snapshot_date, provider, sku, gpu, gpu_raw, gpu_count, tier, community,
           usd_per_gpu_hour, source, ingested_at)
           VALUES ('2025-06-01', 'lambda', 'gpu_1x_a100', 'a100-40gb', 'A100 40GB', 1, 'on_demand', false, 1.29,
                   'scrape', now())"""
    )
    old.close()
    con = connect_writer(path)
    try:
        assert current_version(con) == SCHEMA_VERSION
        assert table(con, "SELECT sku, price_basis, usd_per_gpu_hour::VARCHAR FROM price_snapshots") == [
            ("gpu_1x_a100", "list", "1.2900")
        ]
        # Snapshots from before run tracking count as successful runs, so they are "latest".
        assert table(con, "SELECT provider, status, offers FROM provider_runs") == [("lambda", "success", 1)]
        assert table(con, "SELECT sku FROM analytics.latest_prices") == [("gpu_1x_a100",)]
        from gpuprice.warehouse.schema import MIGRATIONS

        versions = [v for (v,) in table(con, "SELECT version FROM schema_version ORDER BY version")]
        assert versions == [1, *sorted(MIGRATIONS)]
        ranking_columns = {
            c for (c,) in table(con, "SELECT name FROM pragma_table_info('workload_rankings')")
        }
        assert {"total_cost_usd", "observed_on", "excluded_by"} <= ranking_columns
        # Runs recorded before parse strategies were tracked read as structured.
        assert table(con, "SELECT parse_strategy FROM provider_runs") == [("structured",)]
        # v4: a scrape was observed on its snapshot date.
        assert table(con, "SELECT observed_on FROM price_snapshots") == [(dt.date(2025, 6, 1),)]
    finally:
        con.close()
    # Opening again is a no-op.
    con = connect_writer(path)
    assert table(con, "SELECT count(*) FROM price_snapshots") == [(1,)]
    con.close()


def test_price_history_gives_one_period_per_price(con):
    for day, price in [(D1, 2.0), (D2, 2.5), (D3, 2.5), (D4, 3.0)]:
        write(con, "lambda", day, [make_offer(usd_per_gpu_hour=price)])
    periods = table(
        con,
        "SELECT usd_per_gpu_hour::DOUBLE, valid_from, valid_to FROM analytics.price_history ORDER BY valid_from",
    )
    assert periods == [(2.0, D1, D2), (2.5, D2, D4), (3.0, D4, None)]
    changes = table(
        con,
        """SELECT snapshot_date, previous_snapshot_date, old_usd_per_gpu_hour::DOUBLE,
                  new_usd_per_gpu_hour::DOUBLE, pct_change FROM analytics.price_changes ORDER BY snapshot_date""",
    )
    assert changes == [(D2, D1, 2.0, 2.5, 25.0), (D4, D3, 2.5, 3.0, 20.0)]


def test_an_offer_that_disappears_closes_its_period(con):
    write(con, "lambda", D1, [make_offer(), make_offer(sku="gone", gpu_count=8, usd_per_gpu_hour=9.0)])
    write(con, "lambda", D2, [make_offer()])
    rows = table(con, "SELECT sku, valid_from, valid_to FROM analytics.price_history ORDER BY sku")
    assert rows == [("gone", D1, D2), ("gpu_1x_h100_sxm", D1, None)]


def test_latest_prices_and_cheapest_by_gpu(con):
    write(con, "lambda", D1, [make_offer(usd_per_gpu_hour=3.0)])
    write(con, "lambda", D2, [make_offer(usd_per_gpu_hour=2.8)])
    write(
        con,
        "nebius",
        D1,
        [
            make_offer(provider="nebius", sku="h100", usd_per_gpu_hour=2.95),
            make_offer(provider="nebius", sku="h100", tier="spot", usd_per_gpu_hour=1.25),
            make_offer(
                provider="nebius", sku="h100", usd_per_gpu_hour=2.5, effective_from=dt.date(2026, 12, 1)
            ),
            make_offer(
                provider="nebius", sku="mystery", gpu="unknown", gpu_raw="Mystery X", usd_per_gpu_hour=0.1
            ),
        ],
    )
    latest = table(
        con, "SELECT provider, snapshot_date, count(*) FROM analytics.latest_prices GROUP BY ALL ORDER BY 1"
    )
    assert latest == [("lambda", D2, 1), ("nebius", D1, 4)]
    cheapest = table(
        con,
        "SELECT snapshot_date, gpu, tier, provider, usd_per_gpu_hour::DOUBLE FROM analytics.cheapest_by_gpu ORDER BY ALL",
    )
    # The scheduled (future) price and the unknown GPU are not "cheapest"; Nebius' D1 prices
    # carry forward to D2 (a day old), where Lambda's new on-demand price beats them.
    assert cheapest == [
        (D1, "h100-sxm", "on_demand", "nebius", 2.95),
        (D1, "h100-sxm", "spot", "nebius", 1.25),
        (D2, "h100-sxm", "on_demand", "lambda", 2.8),
        (D2, "h100-sxm", "spot", "nebius", 1.25),
    ]


def test_provider_freshness_marks_failed_and_old_providers_stale(con):
    from gpuprice.warehouse.writes import record_provider_run

    now = dt.datetime.now(dt.UTC)
    runs = [
        ("lambda", D1, "success"),
        ("lambda", D4, "success"),
        ("nebius", D1, "success"),
        ("crusoe", D3, "success"),
        ("crusoe", D4, "failed"),
    ]
    for provider, day, status in runs:
        record_provider_run(
            con,
            provider=provider,
            snapshot_date=day,
            source="archive",
            status=status,
            offers=3,
            report=None,
            error=None if status == "success" else "boom",
            started_at=now,
        )
    rows = {
        r[0]: r[1:]
        for r in table(
            con, "SELECT provider, last_success_date, stale, last_error FROM analytics.provider_freshness"
        )
    }
    assert rows["lambda"] == (D4, False, None)
    assert rows["nebius"] == (D1, True, None)  # three days behind the newest run
    assert rows["crusoe"] == (D3, True, "boom")  # failed today: yesterday's data stays, flagged


@pytest.mark.parametrize("engine", ENGINES)
def test_provider_freshness_is_one_macro_the_view_the_reports_and_the_published_copy_share(
    engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The freshness rule is written once (macros/provider_freshness.sql): the view asks it as
    of the newest snapshot date, the reports as of their day; the published copy holds the
    macro, so analysts read the view without our Python, however they open the file."""
    from gpuprice.warehouse.publish import publish_analytics_copy
    from gpuprice.warehouse.queries import provider_freshness_as_of
    from gpuprice.warehouse.sqlguard import open_guarded, run_query
    from gpuprice.warehouse.writes import record_provider_run

    use_engine(engine, tmp_path, monkeypatch)
    con = connect_writer(tmp_path / "warehouse.duckdb")
    now = dt.datetime.now(dt.UTC)
    for provider, day, status in [
        ("lambda", D1, "success"),
        ("lambda", D4, "failed"),
        ("nebius", D3, "success"),
    ]:
        error = None if status == "success" else "boom"
        record_provider_run(
            con, provider=provider, snapshot_date=day, source="archive", status=status, offers=3,
            report=None, error=error, started_at=now,
        )  # fmt: skip
    query = "SELECT provider, last_status, last_error, as_of_date, days_behind, stale FROM analytics.provider_freshness"
    expected = [
        ("lambda", "failed", "boom", D4, (D4 - D1).days, True),
        ("nebius", "success", None, D4, 1, False),
    ]
    assert table(con, query + " ORDER BY provider") == expected
    as_of = provider_freshness_as_of(con, D3)  # before lambda's failure, two days behind: not stale yet
    assert as_of[["provider", "last_status", "age_days", "stale"]].values.tolist() == [
        ["lambda", "success", (D3 - D1).days, False],
        ["nebius", "success", 0, False],
    ]
    copy = publish_analytics_copy(con, tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb")
    con.close()

    reader = connect_reader(copy)  # the CLI's reader: attached as "gpuprice"
    assert table(reader, query + " ORDER BY provider") == expected
    reader.close()
    guarded = open_guarded(copy, tmp_path / "exports")  # gpuprice sql
    assert run_query(guarded, query + " ORDER BY provider", timeout_s=30, row_cap=10).rows == expected
    guarded.close()
    direct = duckdb.connect(str(copy), read_only=True)  # an analyst opening the file itself
    assert table(direct, query.replace("analytics.", "main.v_") + " ORDER BY provider") == expected
    assert table(direct, "SELECT provider FROM main.provider_freshness(DATE '2026-01-01')") == []
    direct.close()
    other = duckdb.connect()  # attached under another name, from another current database
    other.execute(f"ATTACH '{copy}' AS published (READ_ONLY)")
    assert (
        table(other, query.replace("analytics.", "published.analytics.") + " ORDER BY provider") == expected
    )
    other.close()


def _load_gpus(con):
    con.execute(
        """INSERT INTO dim_gpu (slug, vendor, architecture, memory_gb, memory_bandwidth_tbps, dense_bf16_tflops,
               dense_fp8_tflops, form_factor, nvlink_gbps, ecc, tdp_w, release_year, source_url) VALUES
           ('h100-sxm', 'nvidia', 'hopper', 80, 3.35, 989, 1979, 'sxm', 900, true, 700, 2022, 'x'),
           ('h100-pcie', 'nvidia', 'hopper', 80, 2.0, 756, 1513, 'pcie', NULL, true, 350, 2022, 'x')"""
    )


def test_offers_with_specs_join_and_derived_metrics(con):
    _load_gpus(con)
    write(
        con,
        "lambda",
        D1,
        [
            make_offer(sku="sxm8", gpu_count=8, usd_per_gpu_hour=2.0, usd_per_instance_hour=16.0),
            make_offer(sku="pcie1", gpu="h100-pcie", gpu_raw="H100 PCIe", usd_per_gpu_hour=1.512),
            make_offer(
                sku="pcie8", gpu="h100-pcie", gpu_raw="H100 PCIe", gpu_count=8, usd_per_gpu_hour=1.512
            ),
            make_offer(sku="odd", gpu="unknown", gpu_raw="Quantum 9000", usd_per_gpu_hour=1.0),
        ],
    )
    rows = {
        r[0]: r[1:]
        for r in table(
            con,
            """SELECT sku, dense_bf16_tflops, instance_memory_gb, interconnect, nvlink_connected, pcie_only,
                  usd_per_pflop_hour, usd_per_gb_hour, usd_per_tbps_hour FROM analytics.offers_with_specs""",
        )
    }
    assert rows["sxm8"] == (
        989.0,
        640.0,
        "nvlink-nvswitch",
        True,
        False,
        round(2.0 / 0.989, 4),
        0.025,
        round(2.0 / 3.35, 4),
    )
    assert rows["pcie1"] == (756.0, 80.0, "single-gpu", False, False, 2.0, 0.0189, 0.756)
    assert rows["pcie8"][2:4] == ("pcie", False) and rows["pcie8"][4] is True
    assert rows["odd"][0] is None
    unknown = table(con, "SELECT provider, gpu_raw, offers FROM analytics.unknown_gpus")
    assert unknown == [("lambda", "Quantum 9000", 1)]
    best = table(
        con,
        "SELECT metric, tier, rank, sku FROM analytics.best_value_by_metric WHERE snapshot_date = ? ORDER BY ALL",
        D1,
    )
    assert ("usd_per_pflop_hour", "on_demand", 1, "pcie1") in best or (
        "usd_per_pflop_hour",
        "on_demand",
        1,
        "pcie8",
    ) in best
    assert ("usd_per_gb_hour", "on_demand", 1, "pcie1") in best or (
        "usd_per_gb_hour",
        "on_demand",
        1,
        "pcie8",
    ) in best
    by_gpu = table(con, "SELECT gpu, tier, sku FROM analytics.best_value_by_gpu ORDER BY gpu")
    assert by_gpu == [("h100-pcie", "on_demand", "pcie1"), ("h100-sxm", "on_demand", "sxm8")]


def test_a_scheduled_price_replaces_the_current_one_once_in_force(con):
    from gpuprice.warehouse.queries import offers_as_of

    write(
        con,
        "nebius",
        D4,
        [
            make_offer(provider="nebius", sku="h100", usd_per_gpu_hour=3.85),
            make_offer(
                provider="nebius", sku="h100", usd_per_gpu_hour=4.50, effective_from=D2
            ),  # already in force
            make_offer(provider="nebius", sku="b200", gpu="b200", usd_per_gpu_hour=7.15),
            make_offer(
                provider="nebius",
                sku="b200",
                gpu="b200",
                usd_per_gpu_hour=8.50,
                effective_from=dt.date(2026, 11, 1),
            ),
        ],
    )
    cheapest = table(con, "SELECT gpu, usd_per_gpu_hour::DOUBLE FROM analytics.cheapest_by_gpu ORDER BY gpu")
    assert cheapest == [("b200", 7.15), ("h100-sxm", 4.5)]
    in_force = table(
        con, "SELECT sku, usd_per_gpu_hour::DOUBLE FROM analytics.offers_with_specs WHERE in_force ORDER BY 1"
    )
    assert in_force == [("b200", 7.15), ("h100", 4.5)]
    # On 2026-11-02 the B200 schedule has come too.
    later = offers_as_of(con, dt.date(2026, 11, 2))[["sku", "usd_per_gpu_hour"]].values.tolist()
    assert later == [["b200", 8.5], ["h100", 4.5]]
    assert offers_as_of(con, D4)[["sku", "usd_per_gpu_hour"]].values.tolist() == [
        ["b200", 7.15],
        ["h100", 4.5],
    ]


def test_public_reports_fill_only_dates_without_a_scrape(con):
    import pandas as pd

    from gpuprice.warehouse.history_writes import replace_bundled_public_reports

    write(con, "lambda", D1, [make_offer(usd_per_gpu_hour=2.99)])
    reports = pd.DataFrame(
        [
            make_public_report_row(D1, 2.49),
            make_public_report_row(D2, 2.59),
        ]
    )
    replace_bundled_public_reports(con, reports, [])
    cheapest = table(
        con,
        "SELECT snapshot_date, usd_per_gpu_hour::DOUBLE, source FROM analytics.cheapest_by_gpu ORDER BY 1",
    )
    assert cheapest == [(D1, 2.99, "archive"), (D2, 2.59, "public_report")]


def test_rankings_of_a_version_3_warehouse_get_their_total_and_observed_date(tmp_path: Path) -> None:

    path = tmp_path / "v3.duckdb"
    old = duckdb.connect(str(path))
    old.execute(V1_DDL)
    old.execute("CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TIMESTAMPTZ NOT NULL)")
    for version in (2, 3):
        MIGRATIONS[version](old)
    old.execute("INSERT INTO schema_version VALUES (1, now()), (2, now()), (3, now())")
    old.execute(
        """INSERT INTO workload_rankings (snapshot_date, workload, rank, provider, sku, gpu, gpu_count, nodes,
           tier, community, usd_per_gpu_hour, sharding, per_gpu_gb, tokens_per_sec_per_gpu, mfu, hours,
           run_cost_usd, cost_per_checkpoint_usd, cost_terms, warnings, price_snapshot_date, computed_at)
           VALUES ('2026-10-01', 'w', 1, 'lambda', 's', 'h100-sxm', 1, 1, 'on_demand', false, 2.0, 'none',
                   30, 5000, 0.3, 10, 20.0, 2.5, '{"total_usd": 25.0}', [], '2026-09-30', now())"""
    )
    old.close()
    con = connect_writer(path)
    try:
        assert current_version(con) == SCHEMA_VERSION
        assert table(con, "SELECT total_cost_usd, observed_on FROM workload_rankings") == [
            (25.0, dt.date(2026, 9, 30))
        ]
    finally:
        con.close()


def test_a_ducklake_warehouse_keeps_parquet_files_and_publishes_a_duckdb_copy(tmp_path: Path, monkeypatch):
    from gpuprice.warehouse.lake import is_lake
    from gpuprice.warehouse.publish import export_parquet, publish_analytics_copy

    use_engine("ducklake", tmp_path, monkeypatch)
    con = connect_writer(tmp_path / "warehouse.duckdb")
    assert is_lake(con)
    write(con, "lambda", D1, [make_offer(), make_offer(sku="gpu_8x_h100_sxm", gpu_count=8)])
    con.close()
    assert list((tmp_path / "lake").rglob("*.parquet"))  # the rows live in Parquet data files
    assert not (tmp_path / "warehouse.duckdb").exists()

    con = connect_writer(tmp_path / "warehouse.duckdb")  # reopened: same rows, schema current
    assert table(con, "SELECT count(*) FROM price_snapshots WHERE source = 'archive'") == [(2,)]
    assert current_version(con) == SCHEMA_VERSION
    exported = export_parquet(con, [D1], tmp_path / "exports")
    copy = publish_analytics_copy(con, tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb")
    con.close()
    assert duckdb.read_parquet(str(exported[0])).shape[0] == 2
    analyst = connect_reader(copy)
    assert analyst.execute("SELECT count(*) FROM analytics.latest_prices").fetchone() == (2,)
    analyst.close()


def test_an_unknown_warehouse_engine_or_a_missing_extension_is_one_clear_error(tmp_path: Path, monkeypatch):
    from gpuprice.errors import BadInput
    from gpuprice.warehouse import lake

    with pytest.raises(BadInput, match="ducklake:<catalog>"):
        lake.select("postgres://somewhere")
    monkeypatch.setattr(lake.duckdb, "__version__", "0.0.1")
    with pytest.raises(BadInput, match="built for DuckDB 0.0.1"):
        lake.extension_path()
