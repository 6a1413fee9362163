"""Reading a test warehouse back: partitions, run status, freshness, whole-table fingerprints."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from gpuprice.warehouse.connection import connect_reader

# Columns that record when something happened, not what: they differ between identical runs.
# When a row was written and by which Dagster run (provider_runs.run_id): not the data itself.
AUDIT_COLUMNS = frozenset(
    {
        "ingested_at",
        "fetched_at",
        "started_at",
        "finished_at",
        "computed_at",
        "quarantined_at",
        "applied_at",
        "run_id",
        # the published copy's own bookkeeping: when its partitions were written and published,
        # and how many of its periods an update appended since they were last sorted
        "first_ingested",
        "last_ingested",
        "published_at",
        "unsorted_periods",
    }
)


def open_warehouse(home: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)


def partition_counts(home: Path) -> dict[tuple[str, dt.date], int]:
    """Rows per (provider, snapshot_date) of scraped/replayed snapshots."""
    con = open_warehouse(home)
    try:
        rows = con.execute(
            "SELECT provider, snapshot_date, count(*) FROM price_snapshots"
            " WHERE source IN ('scrape', 'archive') GROUP BY ALL"
        ).fetchall()
    finally:
        con.close()
    return {(p, d): n for p, d, n in rows}


def partition_rows(home: Path, provider: str, day: dt.date) -> list[tuple]:
    """One scraped/replayed partition's rows, every column (an untouched partition keeps even ingested_at).

    Public-report history rows of the same provider and date are not part of the partition."""
    con = open_warehouse(home)
    try:
        return con.execute(
            "SELECT * FROM price_snapshots WHERE provider = ? AND snapshot_date = ?"
            " AND source IN ('scrape', 'archive') ORDER BY ALL",
            [provider, day],
        ).fetchall()
    finally:
        con.close()


def provider_run(home: Path, provider: str, day: dt.date) -> tuple[str, str | None] | None:
    """(status, error) recorded in provider_runs, or None."""
    con = open_warehouse(home)
    try:
        row = con.execute(
            "SELECT status, error FROM provider_runs WHERE provider = ? AND snapshot_date = ?",
            [provider, day],
        ).fetchone()
    finally:
        con.close()
    return (row[0], row[1]) if row else None


def raw_page_rows(home: Path, provider: str, day: dt.date) -> list[tuple[str, str, int]]:
    """(url, stored_path, bytes) of the raw_pages manifest for a provider and date."""
    con = open_warehouse(home)
    try:
        return con.execute(
            "SELECT url, stored_path, bytes FROM raw_pages WHERE provider = ? AND snapshot_date = ? ORDER BY ALL",
            [provider, day],
        ).fetchall()
    finally:
        con.close()


def published_latest(home: Path) -> tuple[dict[str, dt.date], dict[str, bool]]:
    """From the analysts' copy: newest snapshot date per provider, and whether it is stale."""
    con = connect_reader(home / "analytics.duckdb")
    try:
        latest = dict(
            con.execute(
                "SELECT provider, max(snapshot_date) FROM analytics.latest_prices GROUP BY provider"
            ).fetchall()
        )
        stale = dict(con.execute("SELECT provider, stale FROM analytics.provider_freshness").fetchall())
    finally:
        con.close()
    return latest, stale


def _comparable(column: str) -> str:
    # Raw pages are recorded by absolute path; a copied GPUPRICE_HOME holds the same files.
    if column == "stored_path":
        return "regexp_replace(stored_path, '^.*/raw/', 'raw/') AS stored_path"
    return f'"{column}"'


def table_fingerprint(db: Path, *, exclude: frozenset[str] = AUDIT_COLUMNS) -> dict[str, list[tuple]]:
    """Every base table's rows (sorted), audit timestamps left out: equal fingerprints, equal data."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [
            t
            for (t,) in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND database_name = current_database()"
                " ORDER BY table_name"
            ).fetchall()
        ]
        result = {}
        for table in tables:
            columns = [
                c
                for (c,) in con.execute(
                    "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main'"
                    " AND database_name = current_database() ORDER BY column_index",
                    [table],
                ).fetchall()
            ]
            kept = ", ".join(_comparable(c) for c in columns if c not in exclude)
            result[table] = con.execute(f'SELECT {kept} FROM "{table}" ORDER BY ALL').fetchall()
        return result
    finally:
        con.close()
