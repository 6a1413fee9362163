"""Idempotent writes: each partition is deleted and re-inserted in one transaction.

A crash between DELETE and COMMIT rolls back (DuckDB's WAL), so a partition is never
half-written; running the same date twice gives the same rows. Imported history (public
reports, a catalog's history) is merged by its natural key in ``history_writes.py``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Iterator, Sequence

import duckdb
import pandas as pd

from gpuprice.scrapers.offer import Offer, ParseReport, ParseResult
from gpuprice.sources import SCRAPED_SOURCES
from gpuprice.warehouse import partition_fingerprints

# The rows are built in snapshot_rows.py; SnapshotPartition and offers_frame are also named here,
# beside the writes that store them (the pipeline's stages and the benchmarks use them so).
from gpuprice.warehouse.snapshot_rows import OFFER_COLUMNS, PartitionRows, partition_rows, provider_run_row
from gpuprice.warehouse.snapshot_rows import SnapshotPartition as SnapshotPartition
from gpuprice.warehouse.snapshot_rows import offers_frame as offers_frame
from gpuprice.warehouse.sql_files import sql, statement
from gpuprice.warehouse.tables import PROVIDER_RUN_COLUMNS, RAW_PAGE_COLUMNS, column_names


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    con.begin()
    try:
        yield con
    except BaseException:
        con.rollback()
        raise
    con.commit()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _insert_frame(
    con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame, columns: Sequence[str]
) -> None:
    if frame.empty:
        return
    con.register("_incoming", frame)
    try:
        con.execute(statement("writes/insert_frame", table=table, columns=columns))
    finally:
        con.unregister("_incoming")


def replace_snapshot_partition(
    con: duckdb.DuckDBPyConnection,
    *,
    provider: str,
    snapshot_date: dt.date,
    offers: Sequence[Offer],
    source: str,
    raw_sha256: str | None,
    parser_version: str | None,
    report: ParseReport | None = None,
    started_at: dt.datetime | None = None,
    observed_on: dt.date | None = None,
    source_file: str | None = None,
) -> int:
    """Replace the (provider, snapshot_date) partition of scraped/replayed offers and its quarantine rows.

    The provider's run for the date is recorded as successful in the same transaction, so the
    snapshot and its status (which ``latest_prices`` reads) can never disagree.

    ``source`` is the snapshot's origin, ``scrape`` or ``archive`` (a live run is a scrape): the
    partition, the views and the reports all select on exactly these two values.

    ``observed_on`` is the date of the page itself (a replayed archive page may be older than
    ``snapshot_date``; it is never newer); ``source_file`` names the page (URL or archive file).
    """
    partition = SnapshotPartition(
        snapshot_date=snapshot_date,
        result=ParseResult(offers=list(offers), report=report or ParseReport(provider=provider)),  # type: ignore[arg-type]
        raw_sha256=raw_sha256,
        parser_version=parser_version,
        started_at=started_at,
        observed_on=observed_on,
        source_file=source_file,
    )
    return replace_snapshot_partitions(
        con, provider=provider, source=source, partitions=[partition], with_report=report is not None
    )[snapshot_date]


def replace_snapshot_partitions(
    con: duckdb.DuckDBPyConnection,
    *,
    provider: str,
    source: str,
    partitions: Sequence[SnapshotPartition],
    with_report: bool = True,
) -> dict[dt.date, int]:
    """Replace many (provider, snapshot_date) partitions in ONE transaction (a backfill's batch).

    Each date ends exactly as ``replace_snapshot_partition`` would leave it; a parse shared by
    many dates (the same stored page replayed) is turned into rows once. Returns rows per date.
    """
    _check_partitions(source, partitions)
    if not partitions:
        return {}
    rows = partition_rows(provider, source, partitions, with_report=with_report, now=_now())
    for attempt in range(COMMIT_ATTEMPTS):
        try:
            _replace_partitions(con, provider, rows)
            break
        except duckdb.TransactionException:
            # Another writer of a DuckLake committed first (a conflict on the same table's
            # files): nothing of this transaction was kept; write the whole day again.
            if attempt == COMMIT_ATTEMPTS - 1:
                raise
            time.sleep(0.1 * 2**attempt)
    return rows.counts


def _check_partitions(source: str, partitions: Sequence[SnapshotPartition]) -> None:
    """ValueError for a source other than a scrape or a replay, or a page filed before its date."""
    if source not in SCRAPED_SOURCES:
        raise ValueError(f"snapshot source {source!r}; valid: {', '.join(SCRAPED_SOURCES)}")
    for part in partitions:
        if part.observed > part.snapshot_date:
            raise ValueError(
                f"page of {part.observed} cannot be filed under the earlier date {part.snapshot_date}"
            )


# Tries of a partition write that loses a commit race to another DuckLake writer.
COMMIT_ATTEMPTS = 5


def _replace_partitions(con: duckdb.DuckDBPyConnection, provider: str, rows: PartitionRows) -> None:
    with transaction(con):
        # The dates as one list parameter (a registered frame costs ~2 ms more per statement);
        # provider_runs rows of these dates are replaced by _insert_runs below.
        for table in ("snapshots", "quarantine"):
            con.execute(sql(f"writes/delete_scraped_{table}"), {"provider": provider, "dates": rows.dates})
        _insert_offers(con, rows)
        if rows.rejected:
            con.executemany(sql("writes/insert_quarantine"), rows.rejected)
        _insert_runs(con, rows.runs)
        partition_fingerprints.refresh(con, [(provider, day) for day in rows.dates])


def _insert_offers(con: duckdb.DuckDBPyConnection, rows: PartitionRows) -> None:
    """Each partition's snapshot rows: its parse's offers (registered once, however many dates
    replay it) with the partition's values of the other columns bound as parameters."""
    for index, offers in enumerate(rows.offers):
        inserts = [i.values for i in rows.inserts if i.parse == index]
        if not inserts:
            continue
        con.register("_incoming", offers)
        try:
            insert = statement("writes/insert_partition", offer_columns=OFFER_COLUMNS)
            for values in inserts:
                con.execute(insert, values)
        finally:
            con.unregister("_incoming")


def record_raw_page(con: duckdb.DuckDBPyConnection, page: dict) -> None:
    """Add a page to the raw_pages manifest (once per provider, date and content hash)."""
    record_raw_pages(con, [page])


def record_raw_pages(con: duckdb.DuckDBPyConnection, pages: Sequence[dict]) -> None:
    """Add pages to the raw_pages manifest in one transaction (once per provider, date, hash and URL)."""
    if not pages:
        return
    frame = pd.DataFrame([{c: page.get(c) for c in RAW_PAGE_COLUMNS} for page in pages])
    frame = frame.drop_duplicates(["provider", "snapshot_date", "sha256", "url"], keep="last")
    frame["snapshot_date"] = pd.to_datetime(frame["snapshot_date"]).dt.date
    with transaction(con):
        keys = {"providers": "provider", "dates": "snapshot_date", "hashes": "sha256", "urls": "url"}
        con.execute(sql("writes/delete_raw_pages"), {k: frame[c].tolist() for k, c in keys.items()})
        _insert_frame(con, "raw_pages", frame, RAW_PAGE_COLUMNS)


_RUN_DATE, _RUN_PROVIDER = PROVIDER_RUN_COLUMNS.index("snapshot_date"), PROVIDER_RUN_COLUMNS.index("provider")


def _insert_runs(con: duckdb.DuckDBPyConnection, rows: Sequence[list[object]]) -> None:
    """Replace the provider_runs rows of these (provider, date) keys (inside the caller's transaction)."""
    if not rows:
        return
    _delete_runs(con, rows)
    con.executemany(sql("writes/insert_provider_runs"), rows)


def _delete_runs(con: duckdb.DuckDBPyConnection, rows: Sequence[list[object]]) -> None:
    con.execute(
        sql("writes/delete_provider_runs"),
        {"providers": [r[_RUN_PROVIDER] for r in rows], "dates": [r[_RUN_DATE] for r in rows]},
    )


def record_provider_run(con: duckdb.DuckDBPyConnection, **run) -> None:
    """Record a provider's run for a date (a failure: its snapshot partition is left as it was)."""
    record_provider_runs(con, [run])


def record_provider_runs(con: duckdb.DuckDBPyConnection, runs: Sequence[dict]) -> None:
    """Record many provider runs in one transaction (keyword sets of ``record_provider_run``).

    A run's report's rejected rows (a failed check's bad rows, the fallback's prices without GPU
    names) replace that day's quarantine rows of the provider, so they stay inspectable.
    """
    if not runs:
        return
    now = _now()
    quarantined: list[list[object]] = []
    cleared: list[tuple[str, dt.date, str]] = []
    for run in runs:
        report: ParseReport | None = run.get("report")
        if report is not None and report.rejected:
            source = "archive" if run["source"] == "archive" else "scrape"
            cleared.append((run["provider"], run["snapshot_date"], source))
            quarantined.extend(
                [run["snapshot_date"], run["provider"], r.raw, r.reason, None, source, now]
                for r in report.rejected
            )
    with transaction(con):
        _insert_runs(con, [provider_run_row(**run) for run in runs])
        if cleared:
            con.executemany(sql("writes/delete_run_quarantine"), [list(key) for key in cleared])
            con.executemany(sql("writes/insert_quarantine"), quarantined)


def replace_dim_gpu(con: duckdb.DuckDBPyConnection, catalog: pd.DataFrame) -> int:
    columns = list(column_names("dim_gpu"))
    frame = catalog.reindex(columns=columns)
    with transaction(con):
        con.execute(sql("writes/delete_dim_gpu"))
        _insert_frame(con, "dim_gpu", frame, columns)
    return len(frame)


def replace_memory_fit(con: duckdb.DuckDBPyConnection, frame: pd.DataFrame) -> int:
    columns = list(column_names("memory_fit"))
    frame = frame.assign(computed_at=_now()).reindex(columns=columns)
    with transaction(con):
        con.execute(sql("writes/delete_memory_fit"))
        _insert_frame(con, "memory_fit", frame, columns)
    return len(frame)


def replace_rankings(con: duckdb.DuckDBPyConnection, snapshot_date: dt.date, frame: pd.DataFrame) -> int:
    columns = list(column_names("workload_rankings"))
    frame = frame.assign(computed_at=_now(), snapshot_date=snapshot_date).reindex(columns=columns)
    with transaction(con):
        con.execute(sql("writes/delete_rankings"), {"dates": [snapshot_date]})
        _insert_frame(con, "workload_rankings", frame, columns)
    return len(frame)


def replace_rankings_many(con: duckdb.DuckDBPyConnection, ranked: dict[dt.date, pd.DataFrame]) -> int:
    """``replace_rankings`` for many dates in one transaction (a backfill's batch)."""
    if not ranked:
        return 0
    columns = list(column_names("workload_rankings"))
    now = _now()
    frames = [
        f.assign(computed_at=now, snapshot_date=day).reindex(columns=columns) for day, f in ranked.items()
    ]
    frame = pd.concat([f for f in frames if not f.empty] or frames[:1], ignore_index=True)
    with transaction(con):
        con.execute(sql("writes/delete_rankings"), {"dates": sorted(ranked)})
        _insert_frame(con, "workload_rankings", frame, columns)
    return len(frame)
