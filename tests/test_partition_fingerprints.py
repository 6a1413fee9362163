"""partition_fingerprints: every write of price_snapshots keeps it equal to the aggregate over the rows.

After each write path (a scraped day written, replaced, emptied; a backfill's batch; the bundled
public reports reloaded; a user's public reports merged, updated and replaced; a catalog's history
imported, with a pruned offer; an old warehouse migrated) the table equals the fingerprint
aggregate computed here from price_snapshots, on the embedded DuckDB file and on a DuckLake, and
a copy updated by publishes in between equals one built whole.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from test_import_history import catalog_repo, import_then_drop_offers  # noqa: F401 (a fixture)
from test_publish_incremental import PROVIDERS, START, _assert_same_as_whole, _offers, _publish, _write
from test_warehouse import use_engine

from conftest import make_offer, make_public_report_row
from gpuprice.warehouse import publish
from gpuprice.warehouse.connection import connect_writer
from gpuprice.warehouse.history_writes import (
    merge_by_key,
    merge_public_reports,
    replace_bundled_public_reports,
)
from gpuprice.warehouse.schema import SCHEMA_VERSION, current_version
from gpuprice.warehouse.snapshot_rows import SnapshotPartition
from gpuprice.warehouse.writes import replace_snapshot_partitions

# What the table must hold: spelled out here, not read from the product's rule.
AGGREGATE = """SELECT provider, snapshot_date, count(*), min(ingested_at), max(ingested_at)
    FROM price_snapshots GROUP BY provider, snapshot_date ORDER BY ALL"""
STORED = """SELECT provider, snapshot_date, row_count, first_ingested, last_ingested
    FROM partition_fingerprints ORDER BY ALL"""


def assert_exact(con: duckdb.DuckDBPyConnection) -> None:
    stored, aggregate = con.execute(STORED).fetchall(), con.execute(AGGREGATE).fetchall()
    assert stored == aggregate


def _day(index: int) -> dt.date:
    return START + dt.timedelta(days=index)


@pytest.mark.parametrize("engine", ["duckdb", "ducklake"])
def test_every_write_path_keeps_the_fingerprints_exact(tmp_path: Path, monkeypatch, engine: str) -> None:
    use_engine(engine, tmp_path, monkeypatch)
    rng = random.Random(7)
    copy = tmp_path / "analytics.duckdb"
    con = connect_writer(tmp_path / "warehouse.duckdb")
    try:
        assert_exact(con)  # empty
        for index in range(5):
            for provider in PROVIDERS:
                _write(con, provider, _day(index), _offers(rng, provider, index))
                assert_exact(con)
        assert _publish(con, tmp_path, copy) is None  # built whole

        # a day replaced with fewer offers, a day emptied (its partition and fingerprint gone)
        _write(con, "lambda", _day(2), _offers(rng, "lambda", 30)[:2])
        _write(con, "runpod", _day(3), [])
        assert_exact(con)
        assert ("runpod", _day(3)) not in {r[:2] for r in con.execute(STORED).fetchall()}
        # a backfill's batch: many dates of one provider in one transaction, one of them new
        parts = [
            SnapshotPartition(
                snapshot_date=_day(index),
                result=_parse(rng, "aws", index),
                raw_sha256=None,
                parser_version=None,
            )
            for index in (-2, 1, 4)
        ]
        replace_snapshot_partitions(con, provider="aws", source="archive", partitions=parts)
        assert_exact(con)
        assert _publish(con, tmp_path, copy) is not None
        assert_exact(con)

        # the bundled public reports: loaded, then reloaded with a row moved to another day
        replace_bundled_public_reports(
            con,
            pd.DataFrame([make_public_report_row(_day(1), 2.49), make_public_report_row(_day(6), 2.59)]),
            [],
        )
        assert_exact(con)
        replace_bundled_public_reports(
            con,
            pd.DataFrame([make_public_report_row(_day(1), 2.49), make_public_report_row(_day(7), 2.59)]),
            [],
        )
        assert_exact(con)
        assert ("lambda", _day(6)) not in {r[:2] for r in con.execute(STORED).fetchall()}
        # a user's public reports: added, one updated, then all replaced by another file
        mine = [
            make_public_report_row(_day(2), 1.99, sku="A100 x1 [on_demand]"),
            make_public_report_row(_day(8), 1.89, provider="runpod"),
        ]
        merge_public_reports(con, pd.DataFrame(mine), [], source_file="mine.csv")
        assert_exact(con)
        mine[0] = make_public_report_row(_day(2), 1.79, sku="A100 x1 [on_demand]")
        counts = merge_public_reports(con, pd.DataFrame(mine), [], source_file="mine.csv")
        assert (counts.added, counts.updated) == (0, 1)
        assert_exact(con)
        merge_public_reports(con, pd.DataFrame(mine[:1]), [], source_file="other.csv", replace=True)
        assert_exact(con)
        assert ("runpod", _day(8)) not in {r[:2] for r in con.execute(STORED).fetchall()}
        assert _publish(con, tmp_path, copy) is not None
        _assert_same_as_whole(con, tmp_path, copy)
    finally:
        con.close()


def _parse(rng: random.Random, provider: str, index: int):
    from gpuprice.scrapers.offer import ParseReport, ParseResult

    return ParseResult(offers=_offers(rng, provider, index), report=ParseReport(provider=provider))


def _catalog_rows(day: dt.date, skus: list[str], price: float) -> pd.DataFrame:
    from gpuprice.warehouse.tables import SNAPSHOT_COLUMNS

    rows = [
        {
            **make_public_report_row(day, price, sku=sku, provider="runpod"),
            "observed_on": day,
            "source": "catalog_history",
            "ingested_at": dt.datetime.now(dt.UTC),
            "source_file": f"catalog@{price}",
        }
        for sku in skus
    ]
    return pd.DataFrame(rows).reindex(columns=list(SNAPSHOT_COLUMNS))


def test_a_merge_that_prunes_keeps_the_fingerprints_exact(tmp_path: Path) -> None:
    """merge_by_key as the catalog import calls it: a day made complete (an offer removed)."""
    con = connect_writer(tmp_path / "warehouse.duckdb")
    key = ("provider", "sku", "observed_on")
    try:
        _write(con, "runpod", _day(0), [make_offer(provider="runpod", sku="scraped")])
        for day in (_day(0), _day(1)):
            merge_by_key(
                con,
                _catalog_rows(day, ["a", "b"], 2.0),
                source="catalog_history",
                key=key,
                compare=("usd_per_gpu_hour",),
                prune_within=("provider", "observed_on"),
            )
            assert_exact(con)
        added, updated, removed = merge_by_key(
            con,
            _catalog_rows(_day(0), ["a"], 2.5),
            source="catalog_history",
            key=key,
            compare=("usd_per_gpu_hour",),
            prune_within=("provider", "observed_on"),
        )
        assert (added, updated, removed) == (0, 1, 1)
        assert_exact(con)
    finally:
        con.close()


def test_a_catalog_history_import_keeps_the_fingerprints_exact(home: Path, cli, catalog_repo: Path) -> None:  # noqa: F811
    assert cli("import-history", "skypilot-catalog", "--repo", str(catalog_repo)).code == 0
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        assert con.execute(STORED).fetchall()
        assert_exact(con)
    finally:
        con.close()
    # a later commit of a day drops an offer: the day is pruned
    again = import_then_drop_offers(cli, home.parent / "cat")
    assert again.code == 0 and "removed" in again.out
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        assert_exact(con)
    finally:
        con.close()


def test_an_old_warehouse_gets_the_table_and_its_copy_is_updated_not_rebuilt(tmp_path: Path) -> None:
    rng = random.Random(11)
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    con = connect_writer(wh)
    try:
        for index in range(4):
            for provider in PROVIDERS:
                _write(con, provider, _day(index), _offers(rng, provider, index))
        assert _publish(con, tmp_path, copy) is None
        # as a build before version 12 left it: no table, no version 12
        con.execute("DROP TABLE partition_fingerprints")
        con.execute("DELETE FROM schema_version WHERE version = 12")
    finally:
        con.close()
    old = duckdb.connect(str(wh))
    assert current_version(old) == 11
    old.close()

    con = connect_writer(wh)  # migrated on opening
    try:
        assert current_version(con) == SCHEMA_VERSION
        assert_exact(con)
        for provider in PROVIDERS:
            _write(con, provider, _day(4), _offers(rng, provider, 4))
        delta = _publish(con, tmp_path, copy)
        # updated, not built whole; only the new day's partitions differ from the copy's
        assert delta is not None and delta.partitions == len(PROVIDERS)
        assert publish.last_method == "in_place"
        _assert_same_as_whole(con, tmp_path, copy)
    finally:
        con.close()


def test_a_whole_copy_does_not_keep_the_writers_table(tmp_path: Path) -> None:
    con = connect_writer(tmp_path / "warehouse.duckdb")
    try:
        _write(con, "lambda", START, [make_offer()])
        copy = publish.publish_analytics_copy(
            con, tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
        )
    finally:
        con.close()
    reader = duckdb.connect(str(copy), read_only=True)
    try:
        tables = {r[0] for r in reader.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    finally:
        reader.close()
    assert "published_partitions" in tables and "partition_fingerprints" not in tables
