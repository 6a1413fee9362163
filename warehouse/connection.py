"""Opening the warehouse: one writer, migrated on open, with a clear message when it is busy."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from gpuprice.errors import BadInput
from gpuprice.warehouse.lake import LakeTarget, connect_lake, lake_target
from gpuprice.warehouse.schema import migrate
from gpuprice.warehouse.sql_files import sql, statement
from gpuprice.warehouse.views import create_views


class WarehouseBusy(RuntimeError):
    """Another gpuprice process holds the warehouse for writing."""


# DuckDB lets a database take 80 % of the machine's RAM by default. The warehouse's own
# connections (batch writers: a five-year backfill, the publish step) cap it, so a backfill's peak
# stays well under 1 GB on any machine, and spill sorts, joins, aggregates and windows beyond the
# cap to a folder inside the home (``spill_dir``) instead of failing: a cap is a budget, not a
# ceiling on the history's size.
WAREHOUSE_MEMORY_LIMIT = "400MB"
# The publish step's own connection (the analysts' copy): its derived series carry each offer's
# price forward over every day (an ASOF join, which holds more of its state in memory than a sort
# or an aggregate does), so it gets a larger budget; it runs after the writers' work, alone.
PUBLISH_MEMORY_LIMIT = "1GB"


def spill_dir(warehouse_file: Path) -> Path:
    """Where the connections of the warehouse ``warehouse_file`` spill (inside its home).

    DuckDB's own default for a database file (``<file>.tmp``), made explicit so an in-memory
    connection (a DuckLake, the publish step) spills there too rather than into the working directory.
    """
    return Path(str(warehouse_file) + ".tmp")


def limit_memory(
    con: duckdb.DuckDBPyConnection, spill_to: Path | None = None, limit: str | None = None
) -> duckdb.DuckDBPyConnection:
    """Apply ``limit`` (default WAREHOUSE_MEMORY_LIMIT; a setting of the database instance, not of
    the connection) and, given ``spill_to``, spill beyond it to that folder.

    Insertion order is not preserved: every query whose order matters says ORDER BY, and keeping
    the order of unordered results pins whole intermediates in memory. An ASOF join is always
    planned as one (``asof_loop_join_threshold = 0``): DuckDB otherwise turns one whose left side
    it estimates small into a nested loop join plus an aggregate, and its estimate of the daily
    series' left side (a generated series per price period) is far too small on a fresh database
    (a publish's scratch database: 682 k rows took 463 s that way, 3.4 s as an ASOF join)."""
    con.execute(statement("connection/memory_limit", limit=limit or WAREHOUSE_MEMORY_LIMIT))
    con.execute(sql("connection/batch_settings"))
    if spill_to is not None:
        con.execute(statement("connection/spill_to", path=str(own_spill_dir(spill_to))))
    return con


_INSTANCES = itertools.count(1)


def own_spill_dir(spill_to: Path) -> Path:
    """A folder beside ``spill_to`` for one database instance (``<spill_to>-<pid>-<n>``).

    Two DuckDB instances given one ``temp_directory`` write the same file names in it
    (``duckdb_temp_storage_DEFAULT-0.tmp``, ...): the second overwrites what the first spilled and
    the first to close deletes both, so the other fails reading its own spilled pages ("Could not
    read enough bytes"; a publish at 45 M rows: the warehouse connection's window join and the
    scratch database both spilled). DuckDB creates the folder when it first spills and removes it
    when the instance closes."""
    return spill_to.with_name(f"{spill_to.name}-{os.getpid()}-{next(_INSTANCES)}")


DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file (storage header)


def check_database_file(path: Path, what: str = "warehouse") -> None:
    """BadInput naming ``path`` when it exists but is not a DuckDB database.

    Checked before any connection: DuckDB reports such a file as an IOException, which
    dagster-duckdb retries with backoff for ~100 s per connection, every step of a run.
    """
    if not path.exists() and not path.is_symlink():
        return
    if not path.is_file():
        raise BadInput(f"{what} {path} is not a file; move it away (a new {what} is created when missing)")
    try:
        with path.open("rb") as handle:
            header = handle.read(12)
    except OSError as exc:
        raise BadInput(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    if header[8:12] != DUCKDB_MAGIC:
        raise BadInput(
            f"{what} {path} is not a DuckDB database file; "
            "move it away or restore it (a new one is created when missing)"
        )


def _is_lock_error(exc: duckdb.Error) -> bool:
    text = str(exc).lower()
    return "lock" in text or "conflicting" in text


# How long a writer waits for a warehouse another process holds (GPUPRICE_LOCK_TIMEOUT): the
# edges (the CLI, the code location) set it from the settings; the default is the setting's.
_lock_timeout_s = 60.0


def set_lock_timeout(seconds: float) -> None:
    """The longest wait for the warehouse's lock from now on in this process (seconds > 0)."""
    global _lock_timeout_s
    _lock_timeout_s = float(seconds)


def lock_timeout() -> float:
    return _lock_timeout_s


_HOLDER = re.compile(r"held in (?P<exe>.*?) \(PID (?P<pid>\d+)\)")


def lock_holder(message: str) -> str | None:
    """Who holds the lock, from DuckDB's message ("PID 123: gpuprice run --date ..."), or None."""
    match = _HOLDER.search(message)
    if not match:
        return None
    pid = match.group("pid")
    try:  # the holder's command line, when this machine shows it
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        command = ""
    command = " ".join(command.split()) or match.group("exe")
    return f"PID {pid}: {command[:120]}"


WAREHOUSE_FILE = "warehouse.duckdb"


def warehouse_lake(path: Path) -> LakeTarget | None:
    """The DuckLake that stands in for the warehouse file ``path`` (GPUPRICE_WAREHOUSE), or None.

    A ``warehouse.duckdb`` names "the warehouse" of its home; any other file is itself."""
    if Path(path).name != WAREHOUSE_FILE:
        return None
    return lake_target(Path(path).parent)


def warehouse_exists(path: Path) -> bool:
    """Whether the warehouse has been created (a lake's catalog may live in another database)."""
    return warehouse_lake(path) is not None or path.exists()


def connect_writer(path: Path, *, wait_seconds: float | None = None) -> duckdb.DuckDBPyConnection:
    """Open the warehouse for writing, migrating it to the current schema.

    DuckDB allows one writing process per file; a second run waits up to ``wait_seconds``
    (default: the lock timeout) for the first one and then fails with a one-line error rather
    than corrupting anything.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"cannot create the warehouse folder {path.parent}: {exc.strerror or exc}") from None
    con = _connect_waiting(path, read_only=False, wait_seconds=wait_seconds, lake=warehouse_lake(path))
    migrate(con)
    create_views(con)
    return con


def wait_for_writer(path: Path, *, wait_seconds: float | None = None) -> None:
    """Return once the warehouse can be opened for writing (and leave it closed): a command
    checks this before it starts, so a warehouse held past the wait fails it at once with
    WarehouseBusy, before any step runs or reports anything."""
    if warehouse_lake(path) is None and not path.exists():
        return
    _connect_waiting(path, read_only=False, wait_seconds=wait_seconds, lake=warehouse_lake(path)).close()


def connect_read_only(path: Path, *, wait_seconds: float | None = None) -> duckdb.DuckDBPyConnection:
    """Open the warehouse itself read-only, waiting while another process writes it.

    DuckDB's file lock excludes readers too while a writer holds the file, so a run reading its
    own outcome must wait for a concurrent run's step to finish (WarehouseBusy after the wait).
    """
    return _connect_waiting(path, read_only=True, wait_seconds=wait_seconds, lake=warehouse_lake(path))


# Per warehouse, when this process last gave up waiting for its lock (time.monotonic()): for one
# lock timeout after that, other connections to it try once instead of waiting again, so a run
# whose warehouse another process took mid-run stops after one wait, not one wait per step left.
_gave_up_at: dict[str, float] = {}


def _connect_waiting(
    path: Path, *, read_only: bool, wait_seconds: float | None, lake: LakeTarget | None = None
) -> duckdb.DuckDBPyConnection:
    if lake is None:
        check_database_file(path)
    if wait_seconds is None:
        wait_seconds = _lock_timeout_s
    said_wait = wait_seconds
    gave_up = _gave_up_at.get(str(path))
    if gave_up is not None and time.monotonic() - gave_up < _lock_timeout_s:
        wait_seconds = 0.0
    deadline = time.monotonic() + wait_seconds
    delay = 0.2
    while True:
        try:
            if lake is not None:  # GPUPRICE_WAREHOUSE=ducklake:...
                return limit_memory(connect_lake(lake, read_only=read_only), spill_dir(path))
            return limit_memory(duckdb.connect(str(path), read_only=read_only), spill_dir(path))
        except duckdb.IOException as exc:
            if not _is_lock_error(exc) or time.monotonic() >= deadline:
                if _is_lock_error(exc):
                    holder = lock_holder(str(exc))
                    _gave_up_at[str(path)] = time.monotonic()
                    raise WarehouseBusy(
                        f"warehouse {path} is locked by another gpuprice run"
                        f"{f' ({holder})' if holder else ''}; waited {said_wait:g} s"
                        " (GPUPRICE_LOCK_TIMEOUT sets the wait)"
                    ) from None
                raise
            time.sleep(max(0.0, min(delay, deadline - time.monotonic())))
            delay = min(delay * 2, 2.0)


@contextlib.contextmanager
def writer(path: Path, *, wait_seconds: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    con = connect_writer(path, wait_seconds=wait_seconds)
    try:
        yield con
    finally:
        con.close()


def connect_reader(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to a published copy, attached under the catalog name ``gpuprice``.

    The file is called analytics.duckdb, which would make its catalog name collide with the
    ``analytics`` schema; attaching under another name keeps ``analytics.latest_prices`` valid.
    """
    check_database_file(path, "published copy")
    con = duckdb.connect(":memory:")
    con.execute(statement("session/attach_published_copy", path=str(path)))
    return con


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> Any:
    """The single value a query returns (None when it returns no row)."""
    row = con.execute(sql, params or []).fetchone()
    return row[0] if row is not None else None
