"""Incremental publishing: the previous analysts' copy brought up to date with what changed.

The copy being built (attached to the warehouse connection as ``_analytics_copy``) starts as a
byte copy of the previous published copy. This module finds what differs from the warehouse and
rewrites only that:

- ``price_snapshots``: the (provider, snapshot_date) partitions whose rows differ (a fingerprint
  per partition, ``sql/publish/partition_fingerprints.sql``, is kept in the copy);
- ``workload_rankings``: the snapshot dates whose rankings differ; the tables kept per provider
  and day (runs, pages, quarantine) their (provider, snapshot_date) groups that differ; the
  other warehouse tables (the GPU catalog, memory fit: small) are replaced whole;
- the derived ``price_periods`` and ``daily_price_rows``: per changed provider, a cutoff (the
  earliest date its rows can change); each offer whose periods reach the cutoff restarts at its
  latest period that began before it, and its periods and daily rows from there are computed
  again, by the warehouse's own views (``create_views``) run on a scratch database holding only
  the provider's rows from the earliest restart on. What the views compute before a restart
  depends only on earlier rows, which did not change. When the newest snapshot date moves on,
  every open period gets days to carry forward, so every provider with one takes part.
- a restarted offer whose latest period was last seen before the cutoff is *carried*: the
  window holds its rows from that last page on, not from the period's start (a period's course
  from an observation on depends only on that observation: the price and basis it compares
  with, the page dates that close it), and the period computed from there is joined to the
  stored one (its start, the observations counted once, the newest observation's SKU and
  source, relabelled on the earlier days' rows). So a new day reads about two days of rows
  per continuing offer, not its whole period.
- the stored periods read are those that reach a cutoff (open, or ended on or after it): an
  offer's periods follow each other without overlap, so its latest period that began before
  the cutoff is the one reaching it, else its last one; only offers without a reaching period
  (new, or back after a gap) are looked up among all stored periods. So the periods read grow
  with the offers alive, not with the history.

A provider with a scheduled price in reach is computed from its whole history (a scheduled
price's period depends on the offer's earlier pages), and anything the copy cannot be updated
from (no copy, another schema, view or publish format, the newest date moving back) makes the
caller build it whole.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import duckdb

from gpuprice.warehouse import connection
from gpuprice.warehouse.connection import limit_memory, scalar, spill_dir
from gpuprice.warehouse.schema import COPY_NEUTRAL_VERSIONS, migrate
from gpuprice.warehouse.sql_files import PLACEHOLDERS, sql, statement
from gpuprice.warehouse.views import create_views

COPY = PLACEHOLDERS["analytics_copy"]  # the copy being built, as attached to the warehouse connection
SCRATCH = PLACEHOLDERS["analytics_scratch"]  # where the restarted offers are computed
# Bumped when the copy's own tables change meaning: a copy of another format is built whole.
PUBLISH_FORMAT = 1
# Tables of the copy only (derived, or the publish's own state); every other table is the warehouse's.
DERIVED_TABLES = (
    "price_periods",
    "daily_price_rows",
    "latest_price_rows",
    "published_partitions",
    "publish_info",
)
PARTITIONED_TABLES = ("price_snapshots", "workload_rankings")
# Tables of the warehouse only: the writers' partition fingerprints (the copy keeps its own,
# published_partitions).
WAREHOUSE_ONLY_TABLES = ("partition_fingerprints",)


@dataclass(frozen=True)
class Delta:
    """What an incremental publish rewrote."""

    partitions: int  # (provider, snapshot_date) partitions added, replaced or removed
    ranking_dates: int
    providers: int  # providers whose periods were computed again
    offers: int  # offers restarted
    window_rows: int  # warehouse rows read to compute them
    periods: int  # periods written
    daily_rows: int  # daily rows written
    carried: int = 0  # restarted offers read from their last page, their stored period continued
    appended_periods: int = 0  # periods appended (the others written updated a stored one in place)


def record_state(
    copy: duckdb.DuckDBPyConnection, *, partitions: bool = True, unsorted_periods: int = 0
) -> None:
    """Store, in the finished copy, what it was built from: its partitions' fingerprints (unless
    an update already stored the warehouse's), the schema, views and publish format (``reusable``
    compares them at the next publish), and how many periods were appended since they were sorted."""
    if partitions:
        copy.execute(sql("publish/record_partitions"))
    copy.execute(
        sql("publish/publish_info"),
        {"format": PUBLISH_FORMAT, "unsorted": unsorted_periods, "neutral": list(COPY_NEUTRAL_VERSIONS)},
    )


def _tables(con: duckdb.DuckDBPyConnection, catalog: str) -> set[str]:
    rows = con.execute(sql("publish/tables_of"), {"catalog": catalog}).fetchall()
    return {r[0] for r in rows}


def reusable(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the attached copy can be updated: it was published by this format, from this
    schema and these views, and holds every warehouse table."""
    mine = _tables(con, COPY)
    if not {"publish_info", "published_partitions", *DERIVED_TABLES} <= mine:
        return False
    current = scalar(con, sql("publish/current_database"))
    if not (_tables(con, current) - set(DERIVED_TABLES) - set(WAREHOUSE_ONLY_TABLES)) <= mine:
        return False
    parameters = {"format": PUBLISH_FORMAT, "neutral": list(COPY_NEUTRAL_VERSIONS)}
    row = con.execute(sql("publish/reusable"), parameters).fetchone()
    return bool(row and row[0])


def update_copy(con: duckdb.DuckDBPyConnection, warehouse_file: Path, scratch_file: Path) -> Delta | None:
    """Bring the attached copy up to date with the warehouse; None when it must be built whole
    (nothing has been written to it then)."""
    con.execute(sql("publish/now_fingerprints"))
    try:
        delta = _update(con, warehouse_file, scratch_file)
        if delta is not None:  # the fingerprints the copy now holds
            con.execute(sql("publish/store_fingerprints"))
        return delta
    finally:
        con.execute(sql("publish/drop_work_tables"))


def _update(con: duckdb.DuckDBPyConnection, warehouse_file: Path, scratch_file: Path) -> Delta | None:
    old_newest, new_newest = con.execute(sql("publish/newest_dates")).fetchone() or (None, None)
    if new_newest is None or (old_newest is not None and new_newest < old_newest):
        return None  # an emptied warehouse, or its newest day removed: every carried day changes
    con.execute(sql("publish/changed_partitions"))
    lo, hi = con.execute(sql("publish/changed_bounds")).fetchone() or (None, None)
    con.execute(sql("publish/cutoffs"), {"lo": lo or dt.date.min, "hi": hi or dt.date.min})
    if old_newest is not None and new_newest > old_newest:
        # The newest date moved on: every open period (any provider) carries its price to it.
        con.execute(sql("publish/newest_moved"), {"old_newest": old_newest})
        con.execute(sql("publish/cut_to_newest"), {"old_newest": old_newest})
    partitions, cut_providers = con.execute(sql("publish/change_counts")).fetchone() or (0, 0)
    ranking_dates = _sync_tables(con)
    if cut_providers == 0:
        return Delta(int(partitions), ranking_dates, 0, 0, 0, 0, 0)
    cutoff = scalar(con, sql("publish/first_cutoff"))
    con.execute(sql("publish/restarts"), {"first": cutoff})
    con.execute(sql("publish/window_starts"))
    con.execute(sql("publish/unstart_scheduled"))
    con.execute(sql("publish/window_carry"))
    first = scalar(con, sql("publish/first_start"))
    counts = _recompute(con, scratch_file, new_newest, warehouse_file, first or dt.date.min, cutoff)
    if counts is None:
        return None
    return Delta(int(partitions), ranking_dates, *counts)


def _sync_tables(con: duckdb.DuckDBPyConnection) -> int:
    """The warehouse's own tables into the copy: changed partitions of the partitioned ones, the
    small ones whole. Returns the number of ranking dates rewritten."""
    # The changed dates' range as constants too: the scans skip the row groups outside it.
    bounds = con.execute(sql("publish/changed_bounds")).fetchone()
    if bounds is not None and bounds[0] is not None:
        con.execute(sql("publish/snapshots_delete"), {"lo": bounds[0], "hi": bounds[1]})
        con.execute(sql("publish/snapshots_insert"), {"lo": bounds[0], "hi": bounds[1]})
    dates = [r[0] for r in con.execute(sql("publish/ranking_dates_changed")).fetchall()]
    if dates:
        con.execute(sql("publish/rankings_delete"), {"dates": dates})
        con.execute(sql("publish/rankings_insert"), {"dates": dates})
    current = scalar(con, sql("publish/current_database"))
    skipped = {*PARTITIONED_TABLES, *DERIVED_TABLES, *WAREHOUSE_ONLY_TABLES}
    # Tables kept per provider and day (runs, pages, quarantine) grow with the history: only
    # their differing (provider, snapshot_date) groups are replaced. The others are small.
    per_day = {r[0] for r in con.execute(sql("publish/per_day_tables")).fetchall()}
    for table in sorted(_tables(con, current) - skipped):
        name = "publish/replace_copy_partitions" if table in per_day else "publish/replace_copy_table"
        con.execute(statement(name, table=table))
    return len(dates)


def attach_scratch(con: duckdb.DuckDBPyConnection, scratch_file: Path, *, read_only: bool = False) -> None:
    """Attach the scratch database as SCRATCH (a path: ATTACH binds no parameters)."""
    name = "publish/attach_scratch_read_only" if read_only else "publish/attach_scratch"
    con.execute(statement(name, path=str(scratch_file)))


def _recompute(
    con: duckdb.DuckDBPyConnection,
    scratch_file: Path,
    newest: dt.date,
    warehouse_file: Path,
    first: dt.date,
    cutoff: dt.date,
) -> tuple[int, int, int, int, int, int, int] | None:
    """The restarted offers' periods and daily rows, by the warehouse's views run on a scratch
    database that holds only the window's rows, written into the copy. ``first``: where the
    window's rows start; ``cutoff``: the earliest cutoff (the stored periods replaced are those
    that reach it, and the closed offers' last ones: a constant, so the scans skip the others'
    rows before reading them). Returns (providers,
    offers, window rows, periods, daily rows, carried offers, periods appended), or None when a carried period could not be
    continued (the copy is then built another way)."""
    scratch_file.unlink(missing_ok=True)
    scratch = duckdb.connect(str(scratch_file))
    try:
        migrate(scratch)
        create_views(scratch)
    finally:
        scratch.close()
    attach_scratch(con, scratch_file)
    try:
        con.execute(sql("publish/window_rows"), {"first": first})
        con.execute(sql("publish/scratch_fill"))
        con.execute(sql("publish/old_periods"), {"cutoff": cutoff})
        closed = scalar(con, sql("publish/closed_count")) or 0
        if closed:  # offers whose last period ended before the cutoff: a scan of their GPUs' periods
            con.execute(sql("publish/closed_periods"), {"cutoff": cutoff})
        counted = con.execute(sql("publish/window_counts")).fetchone() or (0, 0, 0, 0)
        providers, offers, window_rows, carried = counted
    finally:
        con.execute(sql("publish/detach_scratch"))
    scratch = limit_memory(
        duckdb.connect(str(scratch_file)), spill_dir(warehouse_file), connection.PUBLISH_MEMORY_LIMIT
    )
    try:
        if (scalar(scratch, sql("publish/scratch_newest")) or dt.date.min) < newest:
            # The daily series runs to the warehouse's newest date, which may be another provider's.
            scratch.execute(sql("publish/sentinel"), {"newest": newest})
        scratch.execute(sql("publish/scratch_periods"))
        scratch.execute(sql("publish/daily_from"))
        scratch.execute(sql("publish/scratch_daily"))
        if scalar(scratch, sql("publish/carry_missing")):
            return None
        scratch.execute(sql("publish/carry_periods"))
        scratch.execute(sql("publish/periods_kept"), {"cutoff": cutoff})
        periods, daily = scratch.execute(sql("publish/scratch_counts")).fetchone() or (0, 0)
        appended = scalar(scratch, sql("publish/periods_appended")) or 0
    finally:
        scratch.close()
    attach_scratch(con, scratch_file, read_only=True)
    try:
        # before derived_replace inserts the new periods, which the same bounds would match
        con.execute(sql("publish/periods_delete"), {"cutoff": cutoff})
        if closed:
            con.execute(sql("publish/closed_delete"), {"cutoff": cutoff})
        con.execute(sql("publish/periods_update"), {"cutoff": cutoff})
        con.execute(sql("publish/derived_replace"))
    finally:
        con.execute(sql("publish/detach_scratch"))
        scratch_file.unlink(missing_ok=True)
    return (
        int(providers),
        int(offers),
        int(window_rows),
        int(periods),
        int(daily),
        int(carried),
        int(appended),
    )
