"""Incremental publishing: the previous analysts' copy brought up to date with what changed.

The copy being built (attached to the warehouse connection as ``_analytics_copy``) starts as a
byte copy of the previous published copy. This module finds what differs from the warehouse and
rewrites only that:

- ``price_snapshots``: the (provider, snapshot_date) partitions whose rows differ (a fingerprint
  per partition, ``sql/publish/partition_fingerprints.sql``, is kept in the copy);
- ``workload_rankings``: the snapshot dates whose rankings differ; the other warehouse tables
  (runs, pages, quarantine, the GPU catalog, memory fit: small) are replaced whole;
- the derived ``price_periods`` and ``daily_price_rows``: per changed provider, a cutoff (the
  earliest date its rows can change); each offer whose periods reach the cutoff restarts at its
  latest period that began before it, and its periods and daily rows from there are computed
  again, by the warehouse's own views (``create_views``) run on a scratch database holding only
  the provider's rows from the earliest restart on. What the views compute before a restart
  depends only on earlier rows, which did not change. When the newest snapshot date moves on,
  every open period gets days to carry forward, so every provider with one takes part.

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
from gpuprice.warehouse.connection import limit_memory, scalar, spill_dir, sql_literal
from gpuprice.warehouse.schema import migrate
from gpuprice.warehouse.sql_files import sql
from gpuprice.warehouse.views import OFFER_KEY_TEXT, create_views

COPY = "_analytics_copy"  # the copy being built, as attached to the warehouse connection
SCRATCH = "_analytics_scratch"  # where the restarted offers are computed
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
_SENTINEL_PROVIDER = "~newest"  # a row that carries the warehouse's newest date into the scratch database


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


def state_sql() -> str:
    """The fingerprints of the partitions a copy holds (run on the copy or the warehouse)."""
    return sql("publish/partition_fingerprints")


def record_state(
    copy: duckdb.DuckDBPyConnection, *, partitions: bool = True, unsorted_periods: int = 0
) -> None:
    """Store, in the finished copy, what it was built from: its partitions' fingerprints (unless
    an update already stored the warehouse's), the schema, views and publish format (``reusable``
    compares them at the next publish), and how many periods were appended since they were sorted."""
    if partitions:
        copy.execute(f"CREATE OR REPLACE TABLE main.published_partitions AS {state_sql()}")
    copy.execute(
        """CREATE OR REPLACE TABLE main.publish_info AS
           SELECT CAST(? AS INTEGER) AS format, (SELECT max(version) FROM main.schema_version) AS schema_version,
                  (SELECT max(fingerprint) FROM main.view_fingerprint) AS view_fingerprint,
                  CAST(? AS BIGINT) AS unsorted_periods, now() AS published_at""",
        [PUBLISH_FORMAT, unsorted_periods],
    )


def _tables(con: duckdb.DuckDBPyConnection, catalog: str) -> set[str]:
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main'", [catalog]
    ).fetchall()
    return {r[0] for r in rows}


def reusable(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the attached copy can be updated: it was published by this format, from this
    schema and these views, and holds every warehouse table."""
    mine = _tables(con, COPY)
    if not {"publish_info", "published_partitions", *DERIVED_TABLES} <= mine:
        return False
    current = scalar(con, "SELECT current_database()")
    if not (_tables(con, current) - set(DERIVED_TABLES)) <= mine:
        return False
    row = con.execute(
        f"""SELECT i.format = ? AND i.schema_version = (SELECT max(version) FROM main.schema_version)
                AND i.view_fingerprint = (SELECT max(fingerprint) FROM main.view_fingerprint)
            FROM {COPY}.main.publish_info i""",
        [PUBLISH_FORMAT],
    ).fetchone()
    return bool(row and row[0])


def update_copy(con: duckdb.DuckDBPyConnection, warehouse_file: Path, scratch_file: Path) -> Delta | None:
    """Bring the attached copy up to date with the warehouse; None when it must be built whole
    (nothing has been written to it then)."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE _pub_now AS {state_sql()}")
    try:
        delta = _update(con, warehouse_file, scratch_file)
        if delta is not None:  # the fingerprints the copy now holds
            con.execute(f"DELETE FROM {COPY}.main.published_partitions")
            con.execute(f"INSERT INTO {COPY}.main.published_partitions BY NAME SELECT * FROM _pub_now")
        return delta
    finally:
        for table in ("_pub_now", "_pub_changed", "_pub_cut", "_pub_restart", "_pub_window"):
            con.execute(f"DROP TABLE IF EXISTS temp.main.{table}")


def _update(con: duckdb.DuckDBPyConnection, warehouse_file: Path, scratch_file: Path) -> Delta | None:
    old_newest = scalar(con, f"SELECT max(snapshot_date) FROM {COPY}.main.published_partitions")
    new_newest = scalar(con, "SELECT max(snapshot_date) FROM _pub_now")
    if new_newest is None or (old_newest is not None and new_newest < old_newest):
        return None  # an emptied warehouse, or its newest day removed: every carried day changes
    con.execute(f"CREATE OR REPLACE TEMP TABLE _pub_changed AS {sql('publish/changed_partitions')}")
    lo, hi = con.execute("SELECT min(snapshot_date), max(snapshot_date) FROM _pub_changed").fetchone() or (
        None,
        None,
    )
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE _pub_cut AS {sql('publish/cutoffs')}",
        {"lo": lo or dt.date.min, "hi": hi or dt.date.min},
    )
    if old_newest is not None and new_newest > old_newest:
        # The newest date moved on: every open period (any provider) carries its price to it.
        con.execute(
            f"""INSERT INTO _pub_cut
                SELECT DISTINCT provider, CAST(? AS DATE) + 1, false FROM {COPY}.main.price_periods
                WHERE coalesce(valid_to, DATE '9999-12-31') > ? AND provider NOT IN (SELECT provider FROM _pub_cut)""",
            [old_newest, old_newest],
        )
        con.execute(
            "UPDATE _pub_cut SET cutoff = least(cutoff, CAST(? AS DATE) + 1)",
            [old_newest],
        )
    partitions = int(scalar(con, "SELECT count(*) FROM _pub_changed"))
    ranking_dates = _sync_tables(con)
    if scalar(con, "SELECT count(*) FROM _pub_cut") == 0:
        return Delta(partitions, ranking_dates, 0, 0, 0, 0, 0)
    first = scalar(con, "SELECT min(cutoff) FROM _pub_cut")
    restarts = _offer_sql("publish/restarts")
    con.execute(f"CREATE OR REPLACE TEMP TABLE _pub_restart AS {restarts}", {"first": first})
    con.execute(
        """CREATE OR REPLACE TEMP TABLE _pub_window AS
           SELECT c.provider, CASE WHEN c.scheduled THEN NULL ELSE least(c.cutoff, min(r.restart)) END AS start
           FROM _pub_cut c LEFT JOIN _pub_restart r ON r.provider = c.provider
           GROUP BY c.provider, c.cutoff, c.scheduled"""
    )
    con.execute(
        f"UPDATE _pub_window SET start = NULL WHERE provider IN ({sql('publish/scheduled_in_reach')})"
    )
    first = scalar(con, "SELECT min(start) FROM _pub_window")
    counts = _recompute(con, scratch_file, new_newest, warehouse_file, first or dt.date.min)
    return Delta(partitions, ranking_dates, *counts)


def _offer_sql(name: str) -> str:
    """A publish query that names offers by their key (the views' OFFER_KEY_TEXT)."""
    return sql(name).replace("{offer_key_text}", OFFER_KEY_TEXT)


def _sync_tables(con: duckdb.DuckDBPyConnection) -> int:
    """The warehouse's own tables into the copy: changed partitions of the partitioned ones, the
    small ones whole. Returns the number of ranking dates rewritten."""
    # The changed dates' range as constants too: the scans skip the row groups outside it.
    bounds = con.execute("SELECT min(snapshot_date), max(snapshot_date) FROM _pub_changed").fetchone()
    if bounds is not None and bounds[0] is not None:
        con.execute(
            f"""DELETE FROM {COPY}.main.price_snapshots p WHERE p.snapshot_date BETWEEN ? AND ? AND EXISTS (
                    SELECT 1 FROM _pub_changed c WHERE c.provider = p.provider AND c.snapshot_date = p.snapshot_date)""",
            list(bounds),
        )
        con.execute(
            f"""INSERT INTO {COPY}.main.price_snapshots BY NAME
                SELECT p.* FROM main.price_snapshots p
                SEMI JOIN _pub_changed c ON c.provider = p.provider AND c.snapshot_date = p.snapshot_date
                WHERE p.snapshot_date BETWEEN ? AND ?
                ORDER BY p.snapshot_date, p.provider, p.sku""",
            list(bounds),
        )
    dates = [r[0] for r in con.execute(sql("publish/ranking_dates_changed")).fetchall()]
    if dates:
        con.execute(
            f"DELETE FROM {COPY}.main.workload_rankings WHERE snapshot_date IN (SELECT unnest(?::DATE[]))",
            [dates],
        )
        con.execute(
            f"""INSERT INTO {COPY}.main.workload_rankings BY NAME
                SELECT * FROM main.workload_rankings WHERE snapshot_date IN (SELECT unnest(?::DATE[]))""",
            [dates],
        )
    current = scalar(con, "SELECT current_database()")
    for table in sorted(_tables(con, current) - set(PARTITIONED_TABLES) - set(DERIVED_TABLES)):
        con.execute(f"DELETE FROM {COPY}.main.{table}")
        con.execute(f"INSERT INTO {COPY}.main.{table} BY NAME SELECT * FROM main.{table}")
    return len(dates)


def _recompute(
    con: duckdb.DuckDBPyConnection, scratch_file: Path, newest: dt.date, warehouse_file: Path, first: dt.date
) -> tuple[int, int, int, int, int]:
    """The restarted offers' periods and daily rows, by the warehouse's views run on a scratch
    database that holds only the window's rows, written into the copy. Returns (providers,
    offers, window rows, periods, daily rows)."""
    scratch_file.unlink(missing_ok=True)
    scratch = duckdb.connect(str(scratch_file))
    try:
        migrate(scratch)
        create_views(scratch)
    finally:
        scratch.close()
    con.execute(f"ATTACH '{sql_literal(str(scratch_file))}' AS {SCRATCH}")
    try:
        con.execute(
            f"INSERT INTO {SCRATCH}.main.price_snapshots BY NAME {_offer_sql('publish/window_rows')}",
            {"first": first},
        )
        con.execute(
            f"""INSERT INTO {SCRATCH}.main.provider_runs BY NAME
                SELECT r.* FROM main.provider_runs r SEMI JOIN _pub_window w ON w.provider = r.provider"""
        )
        con.execute(
            f"""CREATE TABLE {SCRATCH}.main.restart AS SELECT r.offer_key, r.restart, c.cutoff
                FROM _pub_restart r JOIN _pub_cut c ON c.provider = r.provider"""
        )
        con.execute(
            f"""CREATE TABLE {SCRATCH}.main.old_periods AS SELECT s.* FROM {COPY}.main.price_periods s
                JOIN _pub_restart r ON r.offer_key = s.offer_key WHERE s.valid_from >= r.restart"""
        )
        providers = int(scalar(con, "SELECT count(*) FROM _pub_window"))
        offers = int(scalar(con, "SELECT count(*) FROM _pub_restart"))
        window_rows = int(scalar(con, f"SELECT count(*) FROM {SCRATCH}.main.price_snapshots"))
    finally:
        con.execute(f"DETACH {SCRATCH}")
    scratch = limit_memory(
        duckdb.connect(str(scratch_file)), spill_dir(warehouse_file), connection.PUBLISH_MEMORY_LIMIT
    )
    try:
        if (scalar(scratch, "SELECT max(snapshot_date) FROM main.price_snapshots") or dt.date.min) < newest:
            # The daily series runs to the warehouse's newest date, which may be another provider's.
            scratch.execute(
                """INSERT INTO main.price_snapshots (snapshot_date, provider, sku, gpu, gpu_raw, gpu_count,
                       tier, community, usd_per_gpu_hour, source, ingested_at, price_basis, observed_on)
                   VALUES (?, ?, '-', 'unknown', '-', 1, 'on_demand', false, 1, 'public_report', now(), 'list', ?)""",
                [newest, _SENTINEL_PROVIDER, newest],
            )
        scratch.execute(
            """CREATE TABLE main.new_periods AS SELECT h.* FROM main.v_price_history h
               JOIN main.restart r ON r.offer_key = h.offer_key WHERE h.valid_from >= r.restart"""
        )
        # The daily series of the restarted offers, from their restart on, built on those periods.
        scratch.execute("CREATE OR REPLACE VIEW main.v_price_history AS SELECT * FROM main.new_periods")
        scratch.execute(f"CREATE TABLE main.daily_from AS {sql('publish/daily_from')}")
        scratch.execute(
            """CREATE TABLE main.new_daily AS SELECT d.* FROM main.v_daily_prices d
               JOIN main.daily_from f ON f.offer_key = d.offer_key WHERE d.date >= f.daily_from"""
        )
        periods = int(scalar(scratch, "SELECT count(*) FROM main.new_periods"))
        daily = int(scalar(scratch, "SELECT count(*) FROM main.new_daily"))
    finally:
        scratch.close()
    con.execute(f"ATTACH '{sql_literal(str(scratch_file))}' AS {SCRATCH} (READ_ONLY)")
    try:
        # the constant bound first: most rows are older than every restart and skip the join
        con.execute(
            f"""DELETE FROM {COPY}.main.price_periods t WHERE t.valid_from >= ? AND EXISTS (
                    SELECT 1 FROM _pub_restart r WHERE r.offer_key = t.offer_key AND t.valid_from >= r.restart)""",
            [scalar(con, "SELECT min(restart) FROM _pub_restart")],
        )
        con.execute(
            f"""DELETE FROM {COPY}.main.daily_price_rows t WHERE t.date >= ? AND EXISTS (
                    SELECT 1 FROM {SCRATCH}.main.daily_from f WHERE f.offer_key = t.offer_key AND t.date >= f.daily_from)""",
            [scalar(con, f"SELECT min(daily_from) FROM {SCRATCH}.main.daily_from")],
        )
        con.execute(f"INSERT INTO {COPY}.main.price_periods BY NAME SELECT * FROM {SCRATCH}.main.new_periods")
        con.execute(
            f"INSERT INTO {COPY}.main.daily_price_rows BY NAME SELECT * FROM {SCRATCH}.main.new_daily"
            " ORDER BY gpu, date, provider, offer_key"
        )
    finally:
        con.execute(f"DETACH {SCRATCH}")
        scratch_file.unlink(missing_ok=True)
    return providers, offers, window_rows, periods, daily
