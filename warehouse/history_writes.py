"""Writes of imported history: cited public reports and a price catalog's history.

The one merge rule of imported history (``merge_by_key``): observations are merged by their
natural key, so the same input twice changes nothing; the bundled public-report history is
reloaded whole without touching a user's imports. Partition writes of scraped snapshots are in
``writes.py``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import duckdb
import pandas as pd

from gpuprice.sources import PUBLIC_REPORT
from gpuprice.warehouse import partition_fingerprints
from gpuprice.warehouse.schema import BUNDLED_SOURCE_FILE
from gpuprice.warehouse.sql_files import sql, statement
from gpuprice.warehouse.tables import SNAPSHOT_COLUMNS
from gpuprice.warehouse.writes import transaction


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# The natural key of a cited public observation (documented in the README's data dictionary):
# provider, the GPU as written, GPU count and tier as written (all three are in the sku,
# "H100 SXM x8 [on_demand]"), and the date observed. Importing a row with a known key updates
# its price; the same file twice changes nothing.
PUBLIC_REPORT_KEY: tuple[str, ...] = ("provider", "sku", "observed_on")


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
        con.execute(sql("writes/delete_public_quarantine_row"), [source, raw])
        con.execute(sql("writes/insert_quarantine"), [None, provider, raw, reason, None, source, now])


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
        bundled = {"bundled_source_file": BUNDLED_SOURCE_FILE}
        # the partitions of the bundled rows before the reload (a scan: a whole source's rows) and
        # of the rows it inserts (the frame's)
        partitions = partition_fingerprints.touched(
            con, sql("writes/bundled_public_report_partitions"), bundled
        )
        con.execute(sql("writes/delete_bundled_public_reports"), bundled)
        con.execute(sql("writes/delete_public_report_quarantine"))
        con.register("_incoming_public", incoming)
        try:
            insert = statement("writes/insert_bundled_public_reports", key=PUBLIC_REPORT_KEY)
            con.execute(insert, {"source": PUBLIC_REPORT})
        finally:
            con.unregister("_incoming_public")
        _record_public_quarantine(con, quarantined, "public_report")
        partition_fingerprints.refresh(con, partitions | partition_fingerprints.of_frame(incoming))
        count = con.execute(sql("writes/count_bundled_public_reports"), bundled).fetchone()
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
    with transaction(con):
        removed = 0
        if replace:
            bundled = {"bundled_source_file": BUNDLED_SOURCE_FILE}
            row = con.execute(sql("writes/count_imported_public_reports"), bundled).fetchone()
            removed = int(row[0]) if row else 0
            imported = sql("writes/imported_public_report_partitions")
            partitions = partition_fingerprints.touched(con, imported, bundled)
            con.execute(sql("writes/delete_imported_public_reports"), bundled)
            partition_fingerprints.refresh(con, partitions)
        added, updated, _ = merge_by_key(
            con, incoming, source=PUBLIC_REPORT, key=PUBLIC_REPORT_KEY, compare=_PUBLIC_COMPARE
        )
        _record_public_quarantine(con, quarantined, "public_report_import")
    return ImportCounts(
        added=added,
        updated=updated,
        unchanged=len(incoming) - added - updated,
        quarantined=len(quarantined),
        removed=removed,
    )


# What makes a known key's row "updated": its price, its GPU slug, its price basis.
_PUBLIC_COMPARE: tuple[str, ...] = ("usd_per_gpu_hour", "gpu", "price_basis")


def merge_by_key(
    con: duckdb.DuckDBPyConnection,
    incoming: pd.DataFrame,
    *,
    source: str,
    key: tuple[str, ...],
    compare: tuple[str, ...],
    prune_within: tuple[str, ...] | None = None,
) -> tuple[int, int, int]:
    """Merge dated observations of one history source by their natural key: (added, updated, removed).

    The one merge rule of imported history (cited public reports, catalog history), run inside
    the caller's transaction: a new key is added; a known key whose ``compare`` columns differ is
    replaced (it becomes the importer's row); a known key with the same values is left exactly as
    it is, so the same input twice changes nothing. ``prune_within`` (e.g. provider and
    observed_on) makes each such group of the input complete: rows of the source in a group the
    input covers whose key the input no longer has are removed. ``incoming`` holds SNAPSHOT_COLUMNS.
    """
    if incoming.empty:
        return 0, 0, 0
    names = {"key": key, "compare": compare}
    # The source's rows in the input's date range only (a constant range lets DuckDB skip row groups).
    params = {"source": source, "first": incoming["observed_on"].min(), "last": incoming["observed_on"].max()}
    con.register("_incoming_history", incoming)
    try:
        compared = con.execute(statement("writes/merge_compare", **names), params).fetchone()
        added, updated = (int(compared[0]), int(compared[1])) if compared else (0, 0)
        # The partitions the merge may change: the input's, and those of the rows it may delete.
        group = {"key": key, "prune_within": prune_within or key}
        partitions = partition_fingerprints.touched(
            con, statement("writes/merge_partitions", **group), params
        )
        removed = 0
        if prune_within:
            pruned = statement("writes/merge_prune", key=key, prune_within=prune_within)
            row = con.execute(pruned, params).fetchone()
            removed = int(row[0]) if row else 0
        # Changed rows are replaced (and become the importer's); unchanged ones stay as they are.
        con.execute(statement("writes/merge_delete_changed", **names), params)
        con.execute(statement("writes/merge_insert", key=key), params)
        partition_fingerprints.refresh(con, partitions)
    finally:
        con.unregister("_incoming_history")
    return added, updated, removed


def record_history_quarantine(
    con: duckdb.DuckDBPyConnection, source: str, entries: Iterable[tuple[dt.date, str, str, str]]
) -> int:
    """Quarantine rows of an imported history, one per (provider, raw row): ``(first day, provider,
    raw, reason)``. A known entry keeps the earliest day seen; an unchanged one is not rewritten,
    so importing the same range twice changes nothing. Runs inside the caller's transaction."""
    first: dict[tuple[str, str], tuple[dt.date, str]] = {}
    for day, provider, raw, reason in entries:
        known = first.get((provider, raw))
        if known is None or day < known[0]:
            first[(provider, raw)] = (day, reason)
    written = 0
    now = _now()
    for (provider, raw), (day, reason) in first.items():
        row = con.execute(sql("writes/history_quarantine_entry"), [source, provider, raw]).fetchone()
        if row and row[0] is not None:
            if row[0] <= day:
                continue  # already quarantined from an earlier (or the same) day
            con.execute(sql("writes/delete_history_quarantine_entry"), [source, provider, raw])
        con.execute(sql("writes/insert_quarantine"), [day, provider, raw, reason, None, source, now])
        written += 1
    return written
