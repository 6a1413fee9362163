"""Warehouse schema and forward migrations (``sql/migrations/NNN_<what>.sql``, applied in order).

``sql/schema.sql`` is the schema they build, whole (tests/test_schema_sql.py keeps the two equal).
Each migration moves the schema one version forward in one transaction; a warehouse made by
an older gpuprice upgrades in place and keeps its rows. Never edit a released migration:
add a new one.

Naming rule for views: analysts' views live in schema ``analytics`` and read only ``main``
objects (``main.price_snapshots``). The published copy is a file called ``analytics.duckdb``,
so its catalog is also called ``analytics``; a view that said ``analytics.other_view`` would be
ambiguous there.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from importlib import resources

import duckdb

from gpuprice.warehouse.sql_files import sql

BUNDLED_SOURCE_FILE = "bundled:observed_prices.csv"

# Named parameters the migration files may use ($name): values fixed when the migration was released.
_MIGRATION_PARAMETERS: dict[str, object] = {
    "bundled_source_file": BUNDLED_SOURCE_FILE,
    "nebius_from_note": "'from' prices (lowest host variant): ",
}


def _migration_files() -> dict[int, str]:
    """Version -> loader name of ``sql/migrations/NNN_<what>.sql``."""
    folder = resources.files("gpuprice.warehouse").joinpath("sql", "migrations")
    found = {}
    for entry in folder.iterdir():
        match = re.fullmatch(r"(\d{3})_\w+\.sql", entry.name)
        if match:
            found[int(match.group(1))] = f"migrations/{entry.name.removesuffix('.sql')}"
    return dict(sorted(found.items()))


def _apply(name: str, con: duckdb.DuckDBPyConnection) -> None:
    """Run the statements of one migration file in order (inside the caller's transaction)."""
    for statement in duckdb.extract_statements(sql(name)):
        parameters = {key: _MIGRATION_PARAMETERS[key] for key in statement.named_parameters}
        con.execute(engine_ddl(con, statement.query), parameters or None)


_FILES = _migration_files()
# Version 1: the first released schema (kept verbatim: tests build a v1 file from it).
V1_DDL = sql(_FILES[1])
# Each later version: one file, applied in order. Versions are reserved per feature (6-7 belong
# to other work); every migration from 4 on is idempotent, so it applies on top of any version.
MIGRATIONS: dict[int, Callable[[duckdb.DuckDBPyConnection], None]] = {
    version: functools.partial(_apply, name) for version, name in _FILES.items() if version > 1
}
SCHEMA_VERSION = max(MIGRATIONS)
# Versions whose migration changes only the writers' own tables, which the analysts' copy does not
# hold (publish_delta.WAREHOUSE_ONLY_TABLES): the schema version a copy is published from leaves
# them out, so a copy published before one is still updated in place, not built whole.
COPY_NEUTRAL_VERSIONS: tuple[int, ...] = (12,)


def _count(con: duckdb.DuckDBPyConnection, query: str) -> int:
    row = con.execute(query).fetchone()
    return int(row[0] or 0) if row else 0


def current_version(con: duckdb.DuckDBPyConnection) -> int:
    if not _count(con, sql("migrate/schema_version_exists")):
        return 1 if _count(con, sql("migrate/has_snapshot_table")) else 0
    return _count(con, sql("migrate/newest_version"))


def engine_ddl(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """``sql`` as the warehouse's engine takes it: DuckLake has no PRIMARY KEY constraints (the
    writers' delete + insert per partition keeps keys unique), so they become NOT NULL there."""
    from gpuprice.warehouse.lake import is_lake

    if not is_lake(con):
        return sql
    sql = re.sub(r",\s*PRIMARY KEY\s*\([^)]*\)", "", sql)
    return re.sub(r"\bPRIMARY KEY\b", "NOT NULL", sql)


def create_v1(con: duckdb.DuckDBPyConnection) -> None:
    """Create the first released schema (used for new warehouses and by migration tests)."""
    con.execute(engine_ddl(con, V1_DDL))


def _applied_versions(con: duckdb.DuckDBPyConnection) -> set[int] | None:
    """The versions recorded in schema_version; None when there is no such table yet."""
    try:
        return {int(v) for (v,) in con.execute(sql("migrate/applied_versions")).fetchall()}
    except duckdb.CatalogException:
        return None


def migrate(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """Bring the warehouse to SCHEMA_VERSION; returns (from_version, to_version)."""
    # Every writer opens through here: a current warehouse costs one query, not five.
    applied = _applied_versions(con)
    if applied is not None and set(MIGRATIONS) <= applied and max(applied) == SCHEMA_VERSION:
        return SCHEMA_VERSION, SCHEMA_VERSION
    start = current_version(con)
    if start > SCHEMA_VERSION:
        raise RuntimeError(
            f"warehouse schema version {start} is newer than this gpuprice ({SCHEMA_VERSION}); upgrade gpuprice"
        )
    version = start
    if version == 0:
        con.begin()
        create_v1(con)
        con.commit()
        version = 1
    con.execute(sql("migrate/create_schema_version"))
    if _count(con, sql("migrate/count_versions")) == 0:
        con.execute(sql("migrate/record_version"), [version])
    # Versions are reserved per feature, so a build may lack a number in between, and a warehouse
    # written by a build without one (e.g. at 8 without 4) gets it later: apply every migration
    # not recorded yet (each is idempotent).
    applied = {int(v) for (v,) in con.execute(sql("migrate/applied_versions")).fetchall()}
    for target in sorted(t for t in MIGRATIONS if t not in applied):
        con.begin()
        try:
            MIGRATIONS[target](con)
            con.execute(sql("migrate/record_version"), [target])
            con.commit()
        except Exception:
            con.rollback()
            raise
    return start, SCHEMA_VERSION
