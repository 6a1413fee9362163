"""The warehouse as a DuckLake lakehouse: a catalog database plus Parquet data files.

Selected by ``GPUPRICE_WAREHOUSE=ducklake:<catalog>`` (read by ``gpuprice.settings``; the edges,
the CLI and the Dagster code location, pass it to :func:`select`) (a local DuckDB catalog file here; a
``postgres:`` catalog in production, where several writers and readers share it) with the
data files under ``GPUPRICE_WAREHOUSE_DATA`` (a folder or an object-store URL such as
``s3://bucket/gpuprice/``; default ``$GPUPRICE_HOME/lake/``). Unset, or ``duckdb``, keeps the
embedded default: one DuckDB file, ``$GPUPRICE_HOME/warehouse.duckdb``.

DuckDB loads the ``ducklake`` extension (and ``postgres_scanner`` for a PostgreSQL catalog,
``httpfs`` for an object store) from the files of the pinned ``duckdb-extension-*`` packages,
each built for exactly the installed DuckDB version: nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from gpuprice.errors import BadInput
from gpuprice.warehouse.sql_files import sql, statement

LAKE_ALIAS = "lake"
ENGINES = ("duckdb", "ducklake:<catalog>")


@dataclass(frozen=True)
class LakeTarget:
    catalog: str  # what follows "ducklake:" (a file path, or e.g. "postgres:dbname=gpuprice host=...")
    data_path: str


# The engine the edge selected: (catalog, data path or None for $GPUPRICE_HOME/lake), or None.
_selected: tuple[str, str | None] | None = None


def select(engine: str | None, data_path: str | None = None) -> None:
    """Keep the warehouse in a DuckLake (``engine`` = ``ducklake:<catalog>``) or, for None or
    ``duckdb``, in the embedded DuckDB file. BadInput for anything else."""
    global _selected
    if engine in (None, "", "duckdb"):
        _selected = None
        return
    if not engine.startswith("ducklake:") or engine == "ducklake:":
        raise BadInput(f"GPUPRICE_WAREHOUSE {engine!r} is not a warehouse; valid: {', '.join(ENGINES)}")
    _selected = (engine.removeprefix("ducklake:"), data_path or None)


def lake_target(home: Path) -> LakeTarget | None:
    """The selected DuckLake for the warehouse of ``home``, or None for the embedded DuckDB file."""
    if _selected is None:
        return None
    catalog, data = _selected
    data = data or str(home / "lake")
    return LakeTarget(
        catalog=catalog, data_path=data if "://" in data else str(Path(data).expanduser().resolve())
    )


# Extensions come from their PyPI packages (duckdb-extension-<name>, each built for exactly one
# DuckDB release, pinned in requirements.lock) and are loaded from the installed file.
LAKE_EXTENSION = "ducklake"
POSTGRES_EXTENSION = "postgres_scanner"  # DuckDB's PostgreSQL client (a DuckLake catalog there)
HTTPFS_EXTENSION = "httpfs"  # s3:// / https:// data paths
# DuckLake's other catalog databases and DuckDB's client extension for each: loaded from a
# duckdb-extension-* package like the others (none is in the lock: such a catalog names the
# package to install, in one line, instead of DuckDB downloading the client at run time).
CATALOG_CLIENTS = {"sqlite:": "sqlite_scanner", "mysql:": "mysql_scanner"}


def extension_path(name: str = LAKE_EXTENSION) -> Path:
    """The installed file of DuckDB extension ``name`` for this DuckDB version (BadInput when none)."""
    version = duckdb.__version__
    spec = importlib.util.find_spec(f"duckdb_extension_{name}")
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    for root in roots:
        candidate = root / "extensions" / f"v{version}" / f"{name}.duckdb_extension"
        if candidate.is_file():
            return candidate
    package = "duckdb-extension-" + name.replace("_", "-")
    raise BadInput(
        f"DuckLake needs DuckDB's {name} extension built for DuckDB {version}, and none is installed"
        f" (pip install '{package}=={version}'); or unset GPUPRICE_WAREHOUSE to use the DuckDB file"
    )


def extensions_for(target: LakeTarget) -> tuple[str, ...]:
    """The extensions a lake needs: ducklake, plus the PostgreSQL client for a ``postgres:`` catalog
    and httpfs for an object-store data path."""
    names = [LAKE_EXTENSION]
    if target.catalog.startswith(("postgres:", "postgresql:")):
        names.append(POSTGRES_EXTENSION)
    for prefix, extension in CATALOG_CLIENTS.items():  # other catalog databases: their clients
        if target.catalog.startswith(prefix):
            names.append(extension)
    if "://" in target.data_path:
        names.append(HTTPFS_EXTENSION)
    return tuple(names)


def load_extensions(con: duckdb.DuckDBPyConnection, names: tuple[str, ...]) -> None:
    """Load ``names`` from their installed files; DuckDB never downloads one at run time."""
    con.execute(sql("session/no_extension_autoloading"))  # every extension is named and loaded here
    for name in names:
        con.execute(statement("session/load_extension", path=str(extension_path(name))))


_SECRET = re.compile(r"(password\s*=\s*)('[^']*'|[^\s'\"]+)|(://[^:/@\s]+:)[^@\s]+(@)", re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` with the passwords of libpq keyword strings and URLs written as ``***``."""
    return _SECRET.sub(lambda m: f"{m[1]}***" if m[1] else f"{m[3]}***{m[4]}", text)


def _catalog_failure(exc: duckdb.Error) -> str:
    """The server's own words from an ATTACH failure, on one line (DuckDB prefixes them with the
    whole catalog string, password included, ending in ``": "``)."""
    text = str(exc).rsplit('": ', 1)[-1]
    line = " ".join(part.strip() for part in text.splitlines() if part.strip())
    return redact(line.removeprefix("IO Error: "))


def connect_lake(target: LakeTarget, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection whose current database is the lake (so ``main.price_snapshots`` is the lake's).

    BadInput, one line naming the setting and its (password-redacted) value, for a catalog that
    cannot be reached or opened (GPUPRICE_WAREHOUSE) and for a data folder that cannot be made or
    has gone missing under an existing lake (GPUPRICE_WAREHOUSE_DATA)."""
    catalog = target.catalog
    setting = f"GPUPRICE_WAREHOUSE=ducklake:{redact(catalog)}"
    if "://" not in catalog and ":" not in catalog.split("/")[0]:
        catalog = str(Path(catalog).expanduser().resolve())
        try:
            Path(catalog).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"{setting}: cannot create the catalog's folder: {exc.strerror or exc}") from None
    data_missing = False
    if "://" not in target.data_path:
        data_missing = not Path(target.data_path).is_dir()
        try:
            Path(target.data_path).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(
                f"GPUPRICE_WAREHOUSE_DATA={target.data_path}: cannot create the lake's data folder:"
                f" {exc.strerror or exc}"
            ) from None
    con = duckdb.connect(":memory:")
    try:
        load_extensions(con, extensions_for(target))
        attach = statement(
            "lake/attach",
            catalog=f"ducklake:{catalog}",
            alias=LAKE_ALIAS,
            data_path=target.data_path.rstrip("/") + "/",
            read_only=read_only,
        )
        try:
            con.execute(attach)
        except duckdb.Error as exc:
            if "lock" in str(exc).lower():  # a local catalog file held by another process: waited on
                raise
            raise BadInput(f"{setting}: cannot open the DuckLake catalog: {_catalog_failure(exc)}") from None
        con.execute(statement("session/use", database=LAKE_ALIAS))
        if data_missing and _has_data_files(con):
            raise BadInput(
                f"GPUPRICE_WAREHOUSE_DATA={target.data_path}: the folder is missing, but the catalog"
                " lists data files there; mount or restore it (or point the setting at it)"
            )
    except BaseException:
        con.close()
        raise
    return con


def _has_data_files(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute(statement("lake/data_file_count", alias=LAKE_ALIAS)).fetchone()
    return bool(row and row[0])


# How many days of snapshots a lake keeps (GPUPRICE_LAKE_SNAPSHOT_DAYS, set by the edges).
_snapshot_days = 7.0


def set_snapshot_retention(days: float) -> None:
    global _snapshot_days
    _snapshot_days = float(days)


def expire_snapshots(con: duckdb.DuckDBPyConnection, keep_days: float | None = None) -> tuple[int, int]:
    """Expire the lake's snapshots older than ``keep_days`` (default: the retention setting) and
    remove the Parquet files no kept snapshot reads; (snapshots expired, files removed).

    Every rerun of a date writes new files and keeps the old ones for time travel: without this a
    lake grows by a day's files at each rerun for ever."""
    import datetime as dt

    days = _snapshot_days if keep_days is None else keep_days
    cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(days=days)
    expired = con.execute(sql("lake/expire_snapshots"), {"lake": LAKE_ALIAS, "cutoff": cutoff}).fetchall()
    removed = con.execute(sql("lake/cleanup_old_files"), {"lake": LAKE_ALIAS}).fetchall()
    return len(expired), len(removed)


def is_lake(con: duckdb.DuckDBPyConnection) -> bool:
    """True when the connection's current database is a DuckLake."""
    row = con.execute(sql("queries/current_database_type")).fetchone()
    return row is not None and row[0] == "ducklake"
