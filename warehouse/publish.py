"""Publishing: the analysts' read-only copy and the Parquet export.

Analysts never open the warehouse itself: they open ``analytics.duckdb``, a read-only copy
published after each run. Two copies live beside it (``.analytics-copy-a.duckdb`` and ``-b``), and
``analytics.duckdb`` is a hard link to the current one. A publish brings the other copy (the
standby, two publishes behind) up to date in place with what changed since it was published
(``publish_delta``: it compares the warehouse with the copy's own recorded state), checkpoints
it, and then points ``analytics.duckdb`` at it (a new link renamed over the name: atomic). So a
publish writes what changed, not a copy of the whole history; a session holding the old copy open
keeps reading the file it opened, and the next run is never blocked by it.

The standby is updated in place only when nobody holds it: a reader that opened it two publishes
ago still holds DuckDB's lock on it (another process: opening it for writing fails) or a file
descriptor on it (this process). Then, and when the standby is missing, of another format, or
was left half-updated by a killed publish, the new copy is made as before: a byte copy of the
current copy, updated, written to a temp file and renamed over the standby's name (the reader
keeps the file it holds). Without a usable current copy, it is built whole (``publish_whole``).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import duckdb

from gpuprice.warehouse import connection, publish_delta, publish_whole
from gpuprice.warehouse.connection import limit_memory, scalar, spill_dir
from gpuprice.warehouse.lake import LAKE_ALIAS, expire_snapshots, is_lake
from gpuprice.warehouse.publish_delta import Delta
from gpuprice.warehouse.sql_files import sql, statement

COPY_SUFFIXES = ("a", "b")


def copy_files(target: Path) -> tuple[Path, Path]:
    """The two copies ``target`` links to in turn (``.analytics-copy-a.duckdb`` and ``-b``; a
    catalog name other than ``analytics``, which would collide with the schema)."""
    first, second = (
        target.with_name(f".{target.stem}-copy-{suffix}{target.suffix}") for suffix in COPY_SUFFIXES
    )
    return first, second


def current_copy(target: Path) -> Path | None:
    """The copy ``target`` is a link to, or None (no target, or one published another way)."""
    try:
        linked = target.stat()
    except OSError:
        return None
    for path in copy_files(target):
        try:
            found = path.stat()
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == (linked.st_dev, linked.st_ino):
            return path
    return None


def publish_analytics_copy(con: duckdb.DuckDBPyConnection, warehouse_file: Path, target: Path) -> Path:
    """Publish the analysts' copy of the warehouse (or of a DuckLake) to ``target``, atomically.

    The standby copy is updated in place when it can be (see the module's doc), else rebuilt in a
    temp file from the current copy (a byte copy updated with what changed) or whole, then
    ``target`` is linked to it; after a whole build the other copy is made its byte copy, so the
    next publish is in place. A crash at any point leaves ``target`` on the previous copy,
    whole: a standby killed mid-update is marked unusable first (its publish state dropped) and
    rebuilt by the next publish; a killed temp file is removed by the next publish.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_copies(target.parent, holding_writer=not is_lake(con))
    current = current_copy(target)
    first, second = copy_files(target)
    standby = second if current == first else first
    scratch = _temp_file(target.parent)
    try:
        delta = _update_in_place(con, warehouse_file, standby, scratch) if current is not None else None
        if delta is None:
            delta = _rebuild(con, warehouse_file, target if target.is_file() else None, standby, scratch)
        _link(standby, target)
        if delta is None:  # built whole: the other copy (missing, or of another format) becomes its twin
            _duplicate(standby, second if standby == first else first)
    finally:
        scratch.unlink(missing_ok=True)
    global last_delta
    last_delta = delta
    if is_lake(con):  # the copy is out: snapshots past the retention and their files can go
        expire_snapshots(con)
    return target


# What the last publish in this process rewrote (None: it built the copy whole); for the bench.
last_delta: Delta | None = None
# How the last publish in this process made the copy: "in_place", "byte_copy" or "whole"; for the bench and tests.
last_method: str = ""


def _temp_file(folder: Path) -> Path:
    fd, name = tempfile.mkstemp(prefix=".analytics-", suffix=".duckdb.tmp", dir=folder)
    os.close(fd)
    path = Path(name)
    path.unlink()
    return path


def _wal(path: Path) -> Path:
    return Path(str(path) + ".wal")


def held_in_this_process(path: Path) -> bool:
    """Whether this process has ``path`` open (a reader's connection: DuckDB's file locks are per
    process, so they do not tell; Linux's /proc/self/fd does). False where that is not available."""
    try:
        wanted = path.stat()
        descriptors = os.listdir("/proc/self/fd")
    except OSError:
        return False
    for fd in descriptors:
        try:
            found = os.stat(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == (wanted.st_dev, wanted.st_ino):
            return True
    return False


def _update_in_place(
    con: duckdb.DuckDBPyConnection, warehouse_file: Path, standby: Path, scratch: Path
) -> Delta | None:
    """Bring the standby copy up to date in place; None (nothing usable written) when it is
    missing, held by a reader, not updatable, or must be built whole."""
    global last_method
    if not standby.is_file() or held_in_this_process(standby):
        return None
    try:
        os.chmod(standby, 0o644)
        con.execute(statement("publish/attach_copy", path=str(standby)))
    except (OSError, duckdb.Error):  # held by a reader in another process (its lock), or unreadable
        return None
    delta = None
    try:
        if publish_delta.reusable(con):
            # From here until record_state the standby is half-updated: unusable if the run dies.
            con.execute(sql("publish/unpublish_copy"))
            delta = publish_delta.update_copy(con, warehouse_file, scratch)
    finally:
        con.execute(sql("publish/detach_copy"))
    if delta is None:
        return None
    _finish_file(standby, warehouse_file, delta)
    last_method = "in_place"
    return delta


def _rebuild(
    con: duckdb.DuckDBPyConnection, warehouse_file: Path, previous: Path | None, standby: Path, scratch: Path
) -> Delta | None:
    """The new copy in a temp file (``previous`` copied and updated, else built whole), renamed
    over ``standby``. Returns the delta (None: built whole)."""
    global last_method
    tmp = _temp_file(standby.parent)
    try:
        delta = _update_previous(con, warehouse_file, previous, tmp, scratch) if previous else None
        if delta is None:
            _build_whole(con, warehouse_file, tmp, scratch)
        _finish_file(tmp, warehouse_file, delta)
        _wal(standby).unlink(missing_ok=True)  # a killed in-place update's log is not this file's
        os.replace(tmp, standby)
    finally:
        tmp.unlink(missing_ok=True)
    last_method = "whole" if delta is None else "byte_copy"
    return delta


def _finish_file(path: Path, warehouse_file: Path, delta: Delta | None) -> None:
    """The copy's small derived tables and publish state, checkpointed; read-only on disk."""
    copy = limit_memory(duckdb.connect(str(path)), spill_dir(warehouse_file), connection.PUBLISH_MEMORY_LIMIT)
    try:
        _finish(copy, delta)
        copy.execute(sql("publish/checkpoint"))
    finally:
        copy.close()
    os.chmod(path, 0o444)  # read-only on disk too: analysts cannot write to it by accident


def _duplicate(copy: Path, other: Path) -> None:
    """``other`` replaced by a byte copy of ``copy`` (written beside it, then renamed: a reader
    holding ``other`` keeps its file), so the next publish updates it in place. After a whole
    build only: the other copy is then missing or of another format, and this one byte copy,
    made once, replaces the one the next publish would make."""
    tmp = _temp_file(other.parent)
    try:
        shutil.copyfile(copy, tmp)
        os.chmod(tmp, 0o444)
        _wal(other).unlink(missing_ok=True)
        os.replace(tmp, other)
    finally:
        tmp.unlink(missing_ok=True)


def _link(copy: Path, target: Path) -> None:
    """Point ``target`` at ``copy``: a new hard link renamed over it (atomic; a reader keeps the
    file it opened). Where hard links are not available, ``target`` becomes a byte copy."""
    tmp = _temp_file(target.parent)
    try:
        try:
            os.link(copy, tmp)
        except OSError:
            shutil.copyfile(copy, tmp)
            os.chmod(tmp, 0o444)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _update_previous(
    con: duckdb.DuckDBPyConnection, warehouse_file: Path, target: Path, tmp: Path, scratch: Path
) -> Delta | None:
    """Copy the previous published copy to ``tmp`` and update it; None (and ``tmp`` removed)
    when it cannot be updated."""
    try:
        shutil.copyfile(target, tmp)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    os.chmod(tmp, 0o644)
    delta = None
    try:
        con.execute(statement("publish/attach_copy", path=str(tmp)))
    except duckdb.Error:  # not a database this DuckDB can open: built whole
        tmp.unlink(missing_ok=True)
        return None
    try:
        if publish_delta.reusable(con):
            delta = publish_delta.update_copy(con, warehouse_file, scratch)
    finally:
        con.execute(sql("publish/detach_copy"))
    if delta is None:
        tmp.unlink(missing_ok=True)
    return delta


def _build_whole(con: duckdb.DuckDBPyConnection, warehouse_file: Path, tmp: Path, scratch: Path) -> None:
    """The whole warehouse into ``tmp`` (a DuckLake's tables and views copied into one DuckDB file),
    its derived tables computed a chunk of offers at a time (``publish_whole``)."""
    if is_lake(con):
        con.execute(statement("publish/attach_copy", path=str(tmp)))
        try:
            con.execute(statement("publish/copy_lake", lake=LAKE_ALIAS))
        finally:
            con.execute(sql("publish/detach_copy"))
    else:
        con.execute(sql("publish/checkpoint"))
        shutil.copyfile(warehouse_file, tmp)
        os.chmod(tmp, 0o644)
    copy = limit_memory(duckdb.connect(str(tmp)), spill_dir(warehouse_file), connection.PUBLISH_MEMORY_LIMIT)
    try:
        publish_whole.materialize(copy, scratch, spill_dir(warehouse_file))
    finally:
        copy.close()


# Periods an update appends are not in GPU order; past this share of the table they are sorted again.
UNSORTED_PERIODS_SHARE = 0.1


def _finish(copy: duckdb.DuckDBPyConnection, delta: Delta | None) -> None:
    """The copy's small derived tables and its publish state, rebuilt on every publish."""
    unsorted = 0
    if delta is not None:
        previous, periods = copy.execute(sql("publish/unsorted_periods")).fetchone() or (0, 0)
        unsorted = int(previous or 0) + delta.appended_periods
        if unsorted > UNSORTED_PERIODS_SHARE * (periods or 0):
            copy.execute(sql("publish/sort_periods"))
            unsorted = 0
    copy.execute(sql("publish/latest_prices"))
    publish_delta.record_state(copy, partitions=delta is None, unsorted_periods=unsorted)


# A publish takes seconds; a temp copy this old is what a killed run left behind.
STALE_TEMP_SECONDS = 3600
STALE_COPY_PATTERN = ".analytics-*.duckdb.tmp"


def remove_stale_copies(folder: Path, *, holding_writer: bool) -> list[Path]:
    """Remove the temp copies (``.analytics-*.duckdb.tmp``) earlier publishes left when killed.

    ``holding_writer``: the caller holds the warehouse file's only writer lock, so no other
    publish can be under way and every temp copy is stale; otherwise (a DuckLake, where writers
    share the catalog) only copies older than STALE_TEMP_SECONDS are."""
    removed = []
    now = time.time()
    for path in folder.glob(STALE_COPY_PATTERN):
        try:
            if holding_writer or now - path.stat().st_mtime > STALE_TEMP_SECONDS:
                path.unlink()
                removed.append(path)
        except FileNotFoundError:
            continue
    return removed


def _date_dir(root: Path, day: dt.date) -> Path:
    return root / "price_snapshots" / f"snapshot_date={day.isoformat()}"


def export_parquet(con: duckdb.DuckDBPyConnection, dates: Iterable[dt.date], root: Path) -> list[Path]:
    """Rewrite the Parquet partitions of the given snapshot dates (Hive layout: snapshot_date=YYYY-MM-DD)."""
    written: list[Path] = []
    for day in sorted(set(dates)):
        folder = _date_dir(root, day)
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / "data.parquet"
        tmp = folder / ".data.parquet.tmp"
        count = scalar(con, sql("publish/partition_count"), [day])
        if count == 0:
            final.unlink(missing_ok=True)
            continue
        con.execute(statement("publish/export_partition", path=tmp.as_posix()), [day])
        os.replace(tmp, final)
        written.append(final)
    return written
