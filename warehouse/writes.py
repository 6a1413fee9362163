"""Idempotent writes: each partition is deleted and re-inserted in one transaction.

A crash between DELETE and COMMIT rolls back (DuckDB's WAL), so a partition is never
half-written; running the same date twice gives the same rows.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import duckdb
import pandas as pd

from gpuprice.scrapers.offer import Offer, ParseReport
from gpuprice.sources import PUBLIC_REPORT, SCRAPED_SOURCES, sql_values
from gpuprice.warehouse.schema import BUNDLED_SOURCE_FILE

_SCRAPED = sql_values(SCRAPED_SOURCES)

SNAPSHOT_COLUMNS: tuple[str, ...] = (
    "snapshot_date",
    "provider",
    "sku",
    "gpu",
    "gpu_raw",
    "gpu_count",
    "vram_gb",
    "tier",
    "community",
    "commitment_months",
    "region",
    "usd_per_gpu_hour",
    "usd_per_instance_hour",
    "vcpus",
    "ram_gb",
    "storage_gb",
    "available",
    "effective_from",
    "source",
    "raw_sha256",
    "parser_version",
    "ingested_at",
    "price_basis",
    "observed_on",
    "source_file",
)
RAW_PAGE_COLUMNS: tuple[str, ...] = (
    "provider",
    "url",
    "snapshot_date",
    "fetched_at",
    "http_status",
    "etag",
    "last_modified",
    "sha256",
    "bytes",
    "stored_path",
    "parser_version",
)


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def offers_frame(
    offers: Sequence[Offer],
    *,
    snapshot_date: dt.date,
    source: str,
    raw_sha256: str | None,
    parser_version: str | None,
    observed_on: dt.date | None = None,
    source_file: str | None = None,
    ingested_at: dt.datetime | None = None,
) -> pd.DataFrame:
    """Offers as price_snapshots rows; ``observed_on`` defaults to the snapshot date (a live page)."""
    ingested_at = ingested_at or _now()
    rows = []
    for offer in offers:
        data = offer.model_dump()
        rows.append(
            {
                **{k: data.get(k) for k in SNAPSHOT_COLUMNS if k in data},
                "snapshot_date": snapshot_date,
                "source": source,
                "raw_sha256": raw_sha256,
                "parser_version": parser_version,
                "ingested_at": ingested_at,
                "observed_on": observed_on or snapshot_date,
                "source_file": source_file,
            }
        )
    frame = pd.DataFrame(rows, columns=list(SNAPSHOT_COLUMNS))
    return frame


def _insert_frame(
    con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame, columns: Sequence[str]
) -> None:
    if frame.empty:
        return
    con.register("_incoming", frame)
    try:
        cols = ", ".join(columns)
        con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _incoming")
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
    observed_on = observed_on or snapshot_date
    if observed_on > snapshot_date:
        raise ValueError(f"page of {observed_on} cannot be filed under the earlier date {snapshot_date}")
    if source not in SCRAPED_SOURCES:
        raise ValueError(f"snapshot source {source!r}; valid: {', '.join(SCRAPED_SOURCES)}")
    frame = offers_frame(
        offers,
        snapshot_date=snapshot_date,
        source=source,
        raw_sha256=raw_sha256,
        parser_version=parser_version,
        observed_on=observed_on,
        source_file=source_file,
    )
    with transaction(con):
        con.execute(
            f"DELETE FROM price_snapshots WHERE provider = ? AND snapshot_date = ? AND source IN {_SCRAPED}",
            [provider, snapshot_date],
        )
        con.execute(
            f"DELETE FROM quarantine WHERE provider = ? AND snapshot_date = ? AND source IN {_SCRAPED}",
            [provider, snapshot_date],
        )
        _insert_frame(con, "price_snapshots", frame, SNAPSHOT_COLUMNS)
        if report is not None and report.rejected:
            now = _now()
            con.executemany(
                "INSERT INTO quarantine VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    [snapshot_date, provider, r.raw, r.reason, raw_sha256, source, now]
                    for r in report.rejected
                ],
            )
        _insert_provider_run(
            con,
            provider=provider,
            snapshot_date=snapshot_date,
            source=source,
            status="success",
            offers=len(frame),
            report=report,
            error=None,
            started_at=started_at or _now(),
            observed_on=observed_on,
        )
    return len(frame)


def record_raw_page(con: duckdb.DuckDBPyConnection, page: dict) -> None:
    """Add a page to the raw_pages manifest (once per provider, date and content hash)."""
    with transaction(con):
        con.execute(
            "DELETE FROM raw_pages WHERE provider = ? AND snapshot_date = ? AND sha256 = ? AND url = ?",
            [page["provider"], page["snapshot_date"], page["sha256"], page["url"]],
        )
        con.execute(
            f"INSERT INTO raw_pages ({', '.join(RAW_PAGE_COLUMNS)}) VALUES ({', '.join('?' * len(RAW_PAGE_COLUMNS))})",
            [page.get(c) for c in RAW_PAGE_COLUMNS],
        )


def _insert_provider_run(
    con: duckdb.DuckDBPyConnection,
    *,
    provider: str,
    snapshot_date: dt.date,
    source: str,
    status: str,
    offers: int,
    report: ParseReport | None,
    error: str | None,
    started_at: dt.datetime,
    observed_on: dt.date | None = None,
) -> None:
    rejected = len(report.rejected) if report else 0
    unknown = len(report.unknown_gpus) if report else 0
    con.execute(
        "DELETE FROM provider_runs WHERE provider = ? AND snapshot_date = ?", [provider, snapshot_date]
    )
    con.execute(
        "INSERT INTO provider_runs (snapshot_date, provider, source, status, offers, rejected, unknown_gpus,"
        " error, parse_report, started_at, finished_at, parse_strategy, observed_on)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            snapshot_date,
            provider,
            source,
            status,
            offers,
            rejected,
            unknown,
            error,
            report.model_dump_json() if report else None,
            started_at,
            _now(),
            report.parse_strategy if report else None,
            observed_on if status == "success" else None,
        ],
    )


def record_provider_run(con: duckdb.DuckDBPyConnection, **run) -> None:
    """Record a provider's run for a date (a failure: its snapshot partition is left as it was).

    The report's rejected rows (a failed check's bad rows, the fallback's prices without GPU
    names) replace the day's quarantine rows of the provider, so they stay inspectable.
    """
    report: ParseReport | None = run.get("report")
    with transaction(con):
        _insert_provider_run(con, **run)
        if report is not None and report.rejected:
            source = "archive" if run["source"] == "archive" else "scrape"
            con.execute(
                "DELETE FROM quarantine WHERE provider = ? AND snapshot_date = ? AND source = ?",
                [run["provider"], run["snapshot_date"], source],
            )
            now = _now()
            con.executemany(
                "INSERT INTO quarantine VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    [run["snapshot_date"], run["provider"], r.raw, r.reason, None, source, now]
                    for r in report.rejected
                ],
            )


def replace_dim_gpu(con: duckdb.DuckDBPyConnection, catalog: pd.DataFrame) -> int:
    columns = [c for c in con.execute("SELECT * FROM dim_gpu LIMIT 0").fetchdf().columns]
    frame = catalog.reindex(columns=columns)
    with transaction(con):
        con.execute("DELETE FROM dim_gpu")
        _insert_frame(con, "dim_gpu", frame, columns)
    return len(frame)


def replace_memory_fit(con: duckdb.DuckDBPyConnection, frame: pd.DataFrame) -> int:
    columns = [c for c in con.execute("SELECT * FROM memory_fit LIMIT 0").fetchdf().columns]
    frame = frame.assign(computed_at=_now()).reindex(columns=columns)
    with transaction(con):
        con.execute("DELETE FROM memory_fit")
        _insert_frame(con, "memory_fit", frame, columns)
    return len(frame)


def replace_rankings(con: duckdb.DuckDBPyConnection, snapshot_date: dt.date, frame: pd.DataFrame) -> int:
    columns = [c for c in con.execute("SELECT * FROM workload_rankings LIMIT 0").fetchdf().columns]
    frame = frame.assign(computed_at=_now(), snapshot_date=snapshot_date).reindex(columns=columns)
    with transaction(con):
        con.execute("DELETE FROM workload_rankings WHERE snapshot_date = ?", [snapshot_date])
        _insert_frame(con, "workload_rankings", frame, columns)
    return len(frame)


# The natural key of a cited public observation (documented in the README's data dictionary):
# provider, the GPU as written, GPU count and tier as written (all three are in the sku,
# "H100 SXM x8 [on_demand]"), and the date observed. Importing a row with a known key updates
# its price; the same file twice changes nothing.
PUBLIC_REPORT_KEY: tuple[str, ...] = ("provider", "sku", "observed_on")
_PUBLIC_KEY_SQL = " AND ".join(f"p.{c} = i.{c}" for c in PUBLIC_REPORT_KEY)


@dataclass(frozen=True)
class ImportCounts:
    """What one import of public observations changed."""

    added: int
    updated: int
    unchanged: int
    quarantined: int
    removed: int = 0  # rows an explicit --replace deleted first


def _public_frame(frame: pd.DataFrame, source_file: str) -> pd.DataFrame:
    frame = frame.assign(source="public_report", ingested_at=_now(), source_file=source_file)
    if "observed_on" not in frame.columns or frame["observed_on"].isna().any():
        frame["observed_on"] = frame["snapshot_date"]
    return frame.reindex(columns=list(SNAPSHOT_COLUMNS))


def _record_public_quarantine(
    con: duckdb.DuckDBPyConnection, quarantined: Iterable[tuple[str, str, str]], source: str
) -> None:
    now = _now()
    for provider, raw, reason in quarantined:
        con.execute("DELETE FROM quarantine WHERE source = ? AND raw_row = ?", [source, raw])
        con.execute(
            "INSERT INTO quarantine VALUES (?, ?, ?, ?, ?, ?, ?)",
            [None, provider, raw, reason, None, source, now],
        )


def replace_bundled_public_reports(
    con: duckdb.DuckDBPyConnection,
    frame: pd.DataFrame,
    quarantined: Iterable[tuple[str, str, str]],
) -> int:
    """Reload the bundled public-report history; rows a user imported are never touched.

    A bundled row whose natural key a user's import already holds is left out (the user's
    figure stands). Returns the bundled rows now stored.
    """
    incoming = _public_frame(frame, BUNDLED_SOURCE_FILE)
    with transaction(con):
        con.execute(
            f"DELETE FROM price_snapshots WHERE source = '{PUBLIC_REPORT}' AND source_file = ?",
            [BUNDLED_SOURCE_FILE],
        )
        con.execute(f"DELETE FROM quarantine WHERE source = '{PUBLIC_REPORT}'")
        con.register("_incoming_public", incoming)
        try:
            cols = ", ".join(SNAPSHOT_COLUMNS)
            con.execute(
                f"""INSERT INTO price_snapshots ({cols})
                    SELECT {cols} FROM _incoming_public i WHERE NOT EXISTS (
                        SELECT 1 FROM price_snapshots p WHERE p.source = '{PUBLIC_REPORT}' AND {_PUBLIC_KEY_SQL})"""
            )
        finally:
            con.unregister("_incoming_public")
        _record_public_quarantine(con, quarantined, "public_report")
        count = con.execute(
            f"SELECT count(*) FROM price_snapshots WHERE source = '{PUBLIC_REPORT}' AND source_file = ?",
            [BUNDLED_SOURCE_FILE],
        ).fetchone()
    return int(count[0]) if count else 0


def merge_public_reports(
    con: duckdb.DuckDBPyConnection,
    frame: pd.DataFrame,
    quarantined: Sequence[tuple[str, str, str]],
    *,
    source_file: str,
    replace: bool = False,
) -> ImportCounts:
    """Merge a user's observations by PUBLIC_REPORT_KEY (added / updated / unchanged), in one transaction.

    ``replace`` first deletes every row earlier imports added (never the bundled history,
    which the daily run maintains) and reports how many it removed.
    """
    incoming = _public_frame(frame, source_file)
    keys = ", ".join(PUBLIC_REPORT_KEY)
    with transaction(con):
        removed = 0
        if replace:
            row = con.execute(
                f"SELECT count(*) FROM price_snapshots WHERE source = '{PUBLIC_REPORT}' AND source_file IS DISTINCT FROM ?",
                [BUNDLED_SOURCE_FILE],
            ).fetchone()
            removed = int(row[0]) if row else 0
            con.execute(
                f"DELETE FROM price_snapshots WHERE source = '{PUBLIC_REPORT}' AND source_file IS DISTINCT FROM ?",
                [BUNDLED_SOURCE_FILE],
            )
        con.register("_incoming_public", incoming)
        try:
            compared = con.execute(
                f"""SELECT
                        count(*) FILTER (WHERE p.provider IS NULL) AS added,
                        count(*) FILTER (WHERE p.provider IS NOT NULL AND (
                            p.usd_per_gpu_hour <> CAST(i.usd_per_gpu_hour AS DECIMAL(12, 4))
                            OR p.gpu IS DISTINCT FROM i.gpu OR p.price_basis IS DISTINCT FROM i.price_basis)) AS updated
                    FROM _incoming_public i
                    LEFT JOIN (SELECT * FROM price_snapshots WHERE source = '{PUBLIC_REPORT}') p ON {_PUBLIC_KEY_SQL}"""
            ).fetchone()
            added, updated = (int(compared[0]), int(compared[1])) if compared else (0, 0)
            # Changed rows are replaced (and become the importer's); unchanged ones stay as they are.
            con.execute(
                f"""DELETE FROM price_snapshots p WHERE p.source = '{PUBLIC_REPORT}' AND EXISTS (
                        SELECT 1 FROM _incoming_public i WHERE {_PUBLIC_KEY_SQL} AND (
                            p.usd_per_gpu_hour <> CAST(i.usd_per_gpu_hour AS DECIMAL(12, 4))
                            OR p.gpu IS DISTINCT FROM i.gpu OR p.price_basis IS DISTINCT FROM i.price_basis))"""
            )
            cols = ", ".join(SNAPSHOT_COLUMNS)
            con.execute(
                f"""INSERT INTO price_snapshots ({cols})
                    SELECT {cols} FROM _incoming_public i WHERE NOT EXISTS (
                        SELECT 1 FROM price_snapshots p WHERE p.source = '{PUBLIC_REPORT}' AND {_PUBLIC_KEY_SQL})
                    QUALIFY row_number() OVER (PARTITION BY {keys}) = 1"""
            )
        finally:
            con.unregister("_incoming_public")
        _record_public_quarantine(con, quarantined, "public_report_import")
    return ImportCounts(
        added=added,
        updated=updated,
        unchanged=len(incoming) - added - updated,
        quarantined=len(quarantined),
        removed=removed,
    )
