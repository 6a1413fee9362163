"""The warehouse's tables and their columns, read from ``sql/schema.sql`` (their one definition).

Writers' column lists, the Dagster table schema of the snapshot assets and the test and benchmark
helpers take the columns from here, so a column is added in one place (a migration and
schema.sql, which tests/test_schema_sql.py keeps equal).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import duckdb

from gpuprice.warehouse.sql_files import sql

# "    name   TYPE ...,   -- description" (a column line of a CREATE TABLE in schema.sql).
_COLUMN_LINE = re.compile(r"^\s+([a-z_][a-z0-9_]*)\s+[A-Z][^-]*--\s*(.+?)\s*$")


@dataclass(frozen=True)
class Column:
    """One column of a warehouse table, as schema.sql defines it."""

    name: str
    type: str  # DuckDB's spelling: DECIMAL(12,4), TIMESTAMP WITH TIME ZONE, VARCHAR[]
    nullable: bool
    description: str


def _descriptions(text: str) -> dict[tuple[str, str], str]:
    """(table, column) -> the comment on the column's line."""
    found: dict[tuple[str, str], str] = {}
    table = ""
    for line in text.splitlines():
        start = re.match(r"^CREATE TABLE (\w+)", line)
        if start:
            table = start.group(1)
            continue
        column = _COLUMN_LINE.match(line)
        if table and column:
            found[(table, column.group(1))] = column.group(2)
    return found


@functools.cache
def schema_tables() -> dict[str, tuple[Column, ...]]:
    """Every table of schema.sql with its columns in order (schema.sql applied to a scratch database)."""
    text = sql("schema")
    descriptions = _descriptions(text)
    con = duckdb.connect()
    try:
        con.execute(text)
        rows = con.execute(sql("queries/table_columns")).fetchall()
    finally:
        con.close()
    tables: dict[str, list[Column]] = {}
    for table, name, kind, nullable in rows:
        column = Column(name, kind, bool(nullable), descriptions.get((table, name), ""))
        tables.setdefault(table, []).append(column)
    return {table: tuple(columns) for table, columns in tables.items()}


def columns(table: str) -> tuple[Column, ...]:
    """The columns of ``table`` in the order the warehouse has them."""
    return schema_tables()[table]


def column_names(table: str) -> tuple[str, ...]:
    return tuple(c.name for c in columns(table))


SNAPSHOT_COLUMNS: tuple[str, ...] = column_names("price_snapshots")
RAW_PAGE_COLUMNS: tuple[str, ...] = column_names("raw_pages")
PROVIDER_RUN_COLUMNS: tuple[str, ...] = column_names("provider_runs")
QUARANTINE_COLUMNS: tuple[str, ...] = column_names("quarantine")
