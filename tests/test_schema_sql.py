"""warehouse/sql/schema.sql is the schema the migrations build, and every column list derives from it."""

from __future__ import annotations

import datetime as dt

import duckdb

from gpuprice.scrapers.offer import Offer
from gpuprice.warehouse.schema import V1_DDL, migrate
from gpuprice.warehouse.sql_files import sql
from gpuprice.warehouse.tables import SNAPSHOT_COLUMNS, columns, schema_tables

# Snapshot columns the writer fills from the run, not from the parsed offer.
WRITER_COLUMNS = {
    "snapshot_date",
    "source",
    "raw_sha256",
    "parser_version",
    "ingested_at",
    "observed_on",
    "source_file",
}


def describe(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    """Per table of ``main``: its columns (name, type, nullable, default) in order, then its keys."""
    tables: dict[str, list[tuple]] = {}
    for table, name, kind, nullable, default in con.execute(
        "SELECT table_name, column_name, data_type, is_nullable, column_default FROM duckdb_columns()"
        " WHERE table_oid IN (SELECT table_oid FROM duckdb_tables() WHERE schema_name = 'main')"
        " ORDER BY table_name, column_index"
    ).fetchall():
        tables.setdefault(table, []).append((name, kind, nullable, default))
    for table, text in con.execute(
        "SELECT table_name, constraint_text FROM duckdb_constraints()"
        " WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE') ORDER BY ALL"
    ).fetchall():
        tables[table].append(("constraint", text))
    return tables


def schema_sql_database() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(sql("schema"))
    return con


def test_migrations_from_empty_build_schema_sql() -> None:
    migrated = duckdb.connect()
    migrate(migrated)
    assert describe(migrated) == describe(schema_sql_database())


def test_a_first_version_warehouse_with_rows_upgrades_to_schema_sql(tmp_path) -> None:
    path = tmp_path / "v1.duckdb"
    old = duckdb.connect(str(path))
    old.execute(V1_DDL)
    old.execute(
        "INSERT INTO price_snapshots (snapshot_date, provider, sku, gpu, gpu_raw, gpu_count, tier, community,"
        " usd_per_gpu_hour, source, ingested_at) VALUES"
        " ('2026-08-30', 'lambda', 'gpu_1x_h100_sxm5', 'h100-sxm', 'H100 SXM', 1, 'on_demand', false,"
        " 2.99, 'archive', now())"
    )
    old.close()
    con = duckdb.connect(str(path))
    assert migrate(con)[0] == 1
    assert describe(con) == describe(schema_sql_database())
    row = con.execute(
        "SELECT snapshot_date, price_basis, observed_on, CAST(usd_per_gpu_hour AS DOUBLE) FROM price_snapshots"
    ).fetchall()
    assert row == [(dt.date(2026, 8, 30), "list", dt.date(2026, 8, 30), 2.99)]


def test_every_column_has_a_description() -> None:
    missing = [(t, c.name) for t, cols in schema_tables().items() for c in cols if not c.description]
    assert missing == []


def test_offer_fields_are_the_snapshot_columns_a_parse_fills() -> None:
    """The parsers' boundary type (scrapers/offer.py) and the table agree: every offer field is a
    column, and every other column is one the writer fills from the run."""
    fields = set(Offer.model_fields)
    assert fields <= set(SNAPSHOT_COLUMNS), fields - set(SNAPSHOT_COLUMNS)
    assert set(SNAPSHOT_COLUMNS) - fields == WRITER_COLUMNS


def test_snapshot_assets_show_every_column_with_its_type_and_description() -> None:
    from gpuprice.pipelines.defs.scraping.assets import SNAPSHOT_SCHEMA

    shown = [(c.name, c.type, c.description, c.constraints.nullable) for c in SNAPSHOT_SCHEMA.columns]
    assert shown == [(c.name, c.type, c.description, c.nullable) for c in columns("price_snapshots")]
    assert "region" in {c.name for c in SNAPSHOT_SCHEMA.columns}  # part of the offer key
    assert len(shown) == len(SNAPSHOT_COLUMNS) == 27
