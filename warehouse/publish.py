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

from gpuprice.warehouse import connection
from gpuprice.warehouse.connection import limit_memory, scalar, spill_dir, sql_literal
from gpuprice.warehouse.lake import LAKE_ALIAS, expire_snapshots, is_lake
from gpuprice.warehouse.views import materialize_price_history


def publish_analytics_copy(con: duckdb.DuckDBPyConnection, warehouse_file: Path, target: Path) -> Path:
    """Checkpoint the warehouse and atomically replace the analytics copy with it (from a DuckLake
    warehouse: a copy of its tables and views into one DuckDB file).

    The copy gets price_history precomputed (see ``materialize_price_history``).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_copies(target.parent, holding_writer=not is_lake(con))
    if not is_lake(con):
        con.execute("CHECKPOINT")  # folds the WAL into the file, so the file alone is complete
    fd, tmp_name = tempfile.mkstemp(prefix=".analytics-", suffix=".duckdb.tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        if is_lake(con):  # the lake's tables and views, copied into one DuckDB file
            tmp.unlink()
            con.execute(f"ATTACH '{sql_literal(str(tmp))}' AS _analytics_copy")
            try:
                con.execute(f"COPY FROM DATABASE {LAKE_ALIAS} TO _analytics_copy")
            finally:
                con.execute("DETACH _analytics_copy")
        else:
            shutil.copyfile(warehouse_file, tmp)
        copy = limit_memory(
            duckdb.connect(str(tmp)), spill_dir(warehouse_file), connection.PUBLISH_MEMORY_LIMIT
        )
        try:
            materialize_price_history(copy)
            copy.execute("CHECKPOINT")
        finally:
            copy.close()
        os.chmod(tmp, 0o444)  # read-only on disk too: analysts cannot write to it by accident
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    if is_lake(con):  # the copy is out: snapshots past the retention and their files can go
        expire_snapshots(con)
    return target


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
        count = scalar(con, "SELECT count(*) FROM price_snapshots WHERE snapshot_date = ?", [day])
        if count == 0:
            final.unlink(missing_ok=True)
            continue
        # The date as a parameter; the path as an escaped literal (COPY ... TO takes no bound
        # parameter in DuckDB 1.4), so a GPUPRICE_HOME like /home/o'brien cannot end the string.
        con.execute(
            "COPY (SELECT * EXCLUDE (snapshot_date) FROM price_snapshots WHERE snapshot_date = ?"
            f" ORDER BY provider, sku, gpu_count, tier) TO '{sql_literal(tmp.as_posix())}'"
            " (FORMAT parquet, COMPRESSION zstd)",
            [day],
        )
        os.replace(tmp, final)
        written.append(final)
    return written
