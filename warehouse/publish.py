"""Publishing: the analysts' read-only copy and the Parquet export.

Analysts never open the warehouse itself: they open ``analytics.duckdb``, a copy replaced
atomically (write a temp file, then ``os.replace``) after each run. A session holding the old
copy open keeps reading the old file; the next run is never blocked by it.
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


def publish_analytics_copy(con: duckdb.DuckDBPyConnection, warehouse_file: Path, target: Path) -> Path:
    """Publish the analysts' copy of the warehouse (or of a DuckLake) to ``target``, atomically.

    The new copy is written to a temp file beside ``target`` and renamed over it, so a reader
    holding the previous copy keeps a consistent view and a crash at any point leaves the
    previous copy whole (the next publish removes the temp file and starts again from it).
    It starts as a byte copy of the previous published copy, updated with what changed in the
    warehouse since (``publish_delta``); without a usable previous copy, it is built whole: the
    warehouse's tables plus price_history and the daily series precomputed a chunk of offers at
    a time (``publish_whole``).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_copies(target.parent, holding_writer=not is_lake(con))
    tmp = _temp_file(target.parent)
    scratch = _temp_file(target.parent)
    try:
        delta = _update_previous(con, warehouse_file, target, tmp, scratch)
        if delta is None:
            _build_whole(con, warehouse_file, tmp, scratch)
        copy = limit_memory(
            duckdb.connect(str(tmp)), spill_dir(warehouse_file), connection.PUBLISH_MEMORY_LIMIT
        )
        try:
            _finish(copy, delta)
            copy.execute(sql("publish/checkpoint"))
        finally:
            copy.close()
        os.chmod(tmp, 0o444)  # read-only on disk too: analysts cannot write to it by accident
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
        scratch.unlink(missing_ok=True)
    global last_delta
    last_delta = delta
    if is_lake(con):  # the copy is out: snapshots past the retention and their files can go
        expire_snapshots(con)
    return target


# What the last publish in this process rewrote (None: it built the copy whole); for the bench.
last_delta: Delta | None = None


def _temp_file(folder: Path) -> Path:
    fd, name = tempfile.mkstemp(prefix=".analytics-", suffix=".duckdb.tmp", dir=folder)
    os.close(fd)
    path = Path(name)
    path.unlink()
    return path


def _update_previous(
    con: duckdb.DuckDBPyConnection, warehouse_file: Path, target: Path, tmp: Path, scratch: Path
) -> Delta | None:
    """Copy the previous published copy to ``tmp`` and update it; None (and ``tmp`` removed)
    when there is none or it cannot be updated."""
    if not target.is_file():
        return None
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
        unsorted = int(previous or 0) + delta.periods
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
