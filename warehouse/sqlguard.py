"""Read-only SQL for analysts: the published copy, with every way out of it closed.

Layers: the copy is attached READ_ONLY; only SELECT/EXPLAIN statements are accepted; external
access is switched off except for files under GPUPRICE_HOME (so the Parquet exports can be
read), and the configuration is locked so a query cannot switch it back on.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from gpuprice.errors import BadInput
from gpuprice.warehouse.connection import sql_literal

ALLOWED_STATEMENTS = {"SELECT", "EXPLAIN"}


def open_guarded(analytics_file: Path, data_dir: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute(f"ATTACH '{sql_literal(str(analytics_file))}' AS gpuprice (READ_ONLY)")
    con.execute("USE gpuprice")
    con.execute(f"SET allowed_directories = ['{sql_literal(str(data_dir.resolve()))}/']")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def check_read_only(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """Refuse anything but SELECT/EXPLAIN, with a one-line reason."""
    try:
        statements = con.extract_statements(query)
    except duckdb.Error as exc:
        raise BadInput(f"SQL does not parse: {_first_line(exc)}") from None
    if not statements:
        raise BadInput("empty SQL query")
    for statement in statements:
        kind = statement.type.name
        if kind not in ALLOWED_STATEMENTS:
            raise BadInput(
                f"gpuprice sql is read-only: {kind} statements are refused (allowed: SELECT, EXPLAIN)"
            )


def run_query(con: duckdb.DuckDBPyConnection, query: str) -> duckdb.DuckDBPyRelation | None:
    check_read_only(con, query)
    try:
        return con.sql(query)
    except duckdb.PermissionException as exc:
        raise BadInput(
            f"refused: {_first_line(exc)} (only files under the data folder can be read)"
        ) from None
    except duckdb.Error as exc:
        raise BadInput(f"query failed: {_first_line(exc)}") from None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
