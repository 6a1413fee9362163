"""The writes' fingerprint of each price_snapshots partition, kept in ``partition_fingerprints``.

A publish finds the (provider, snapshot_date) partitions that changed since the analysts' copy by
comparing fingerprints (row count, first and last ``ingested_at``: the rule is
``sql/publish/partition_fingerprints.sql``). Computing them from the rows scans the whole history
(2.1 s of a five-year publish at 200 M rows), so every write of price_snapshots keeps the table
exact instead, in its own transaction: it computes the fingerprints of the partitions it touched
again, by the same rule over only their rows (:func:`refresh`). A write that cannot name its
partitions without reading (a merge, a whole source's rows deleted) reads them first
(:func:`touched`). Migration 12 fills the table for an existing warehouse (:func:`refresh_all`,
also for rows written outside the product's writes, such as the benchmark's generator).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping

import duckdb
import pandas as pd

from gpuprice.warehouse.sql_files import sql

Partition = tuple[str, dt.date]


def refresh(con: duckdb.DuckDBPyConnection, partitions: Iterable[Partition]) -> int:
    """Compute these partitions' fingerprints again from their rows (inside the caller's
    transaction, after its writes); a partition left without rows loses its fingerprint.
    Returns the number of partitions."""
    keys = sorted(set(partitions))
    if not keys:
        return 0
    dates = [d for _, d in keys]
    lists = {"providers": [p for p, _ in keys], "dates": dates}
    con.execute(sql("writes/fingerprints_delete"), lists)
    con.execute(sql("writes/fingerprints_insert"), {**lists, "first": min(dates), "last": max(dates)})
    return len(keys)


def touched(
    con: duckdb.DuckDBPyConnection, query: str, parameters: Mapping[str, object] | None = None
) -> set[Partition]:
    """The partitions ``query`` (a statement returning provider, snapshot_date) names: run before a
    write whose rows it selects, so that their partitions can be refreshed after it."""
    return {(p, d) for p, d in con.execute(query, parameters or {}).fetchall()}


def of_frame(frame: pd.DataFrame) -> set[Partition]:
    """The partitions of the rows of ``frame`` (price_snapshots columns)."""
    if frame.empty:
        return set()
    keys = frame[["provider", "snapshot_date"]].drop_duplicates()
    dates = pd.to_datetime(keys["snapshot_date"]).dt.date
    return set(zip(keys["provider"], dates, strict=True))


def refresh_all(con: duckdb.DuckDBPyConnection) -> None:
    """Every partition's fingerprint computed from the whole table (a scan)."""
    con.execute(sql("writes/fingerprints_all"))
