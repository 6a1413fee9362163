"""A whole build of the analysts' copy's derived tables, a chunk of offers at a time.

The derived ``price_periods`` and ``daily_price_rows`` are per offer, and an offer (OFFER_KEY)
belongs to one provider and one region. So the copy computes them a chunk of (provider, region)
pairs at a time, each chunk by the warehouse's own views run on a scratch database that holds
only its rows (plus one marker row per page of its providers, which closes an offer a later page
no longer lists, and a row carrying the warehouse's newest date, to which the daily series runs),
the same machinery as an incremental update (``publish_delta``). A chunk holds about CHUNK_ROWS
rows, so each computation's sorts and windows stay near the memory cap whatever the history's
length: a five-year history at all-region detail (~200 M rows) is ~70 chunks rather than one
computation that spills tens of GB.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from gpuprice.warehouse import connection
from gpuprice.warehouse.connection import limit_memory, scalar
from gpuprice.warehouse.publish_delta import attach_scratch
from gpuprice.warehouse.schema import migrate
from gpuprice.warehouse.sql_files import sql
from gpuprice.warehouse.views import create_views

# Rows per chunk: at the publish step's memory cap (1 GB) a computation of this size runs in
# memory or spills little (5.5 M rows peaked at ~1.1 GB RSS, spilling, as one computation).
CHUNK_ROWS = 3_000_000

Pair = tuple[str, str | None]


def chunks(pairs: list[tuple[str, str | None, int]], limit: int | None = None) -> list[list[Pair]]:
    """(provider, region, rows) in order, packed into consecutive chunks of at most ``limit``
    (default CHUNK_ROWS) rows (a pair with more rows is a chunk of its own)."""
    limit = CHUNK_ROWS if limit is None else limit
    out: list[list[Pair]] = []
    size = 0
    for provider, region, rows in pairs:
        if not out or size + rows > limit:
            out.append([])
            size = 0
        out[-1].append((provider, region))
        size += rows
    return out


def materialize(copy: duckdb.DuckDBPyConnection, scratch_file: Path, spill_to: Path) -> int:
    """Compute the copy's ``price_periods`` and ``daily_price_rows`` from its ``price_snapshots``
    (``copy`` is a connection to the copy being built) and point its views at them. Returns the
    number of chunks computed."""
    pairs = [(p, r, int(n)) for p, r, n in copy.execute(sql("publish/whole_chunks")).fetchall()]
    newest = scalar(copy, sql("queries/newest_snapshot_date"))
    parts = chunks(pairs)
    if parts:
        copy.execute(sql("publish/whole_markers"))
    for part in parts:
        _chunk(copy, part, newest, scratch_file, spill_to)
    copy.execute(sql("publish/whole_empty"))
    copy.execute(sql("publish/whole_done"))
    copy.execute(sql("view_state/read_stored_price_periods"))
    copy.execute(sql("view_state/read_stored_daily_prices"))
    return len(parts)


def _chunk(
    copy: duckdb.DuckDBPyConnection, part: list[Pair], newest: dt.date, scratch_file: Path, spill_to: Path
) -> None:
    scratch_file.unlink(missing_ok=True)
    scratch = duckdb.connect(str(scratch_file))
    try:
        migrate(scratch)
        create_views(scratch)
    finally:
        scratch.close()
    copy.execute(
        sql("publish/whole_chunk"), {"providers": [p for p, _ in part], "regions": [r for _, r in part]}
    )
    attach_scratch(copy, scratch_file)
    try:
        copy.execute(sql("publish/whole_fill_rows"))
        copy.execute(sql("publish/whole_fill_offers"))
        copy.execute(sql("publish/whole_fill_pages"))
    finally:
        copy.execute(sql("publish/detach_scratch"))
    scratch = limit_memory(duckdb.connect(str(scratch_file)), spill_to, connection.PUBLISH_MEMORY_LIMIT)
    try:
        if (scalar(scratch, sql("publish/scratch_newest")) or dt.date.min) < newest:
            scratch.execute(sql("publish/sentinel"), {"newest": newest})
        scratch.execute(sql("publish/whole_compute"))
    finally:
        scratch.close()
    attach_scratch(copy, scratch_file, read_only=True)
    try:
        copy.execute(sql("publish/whole_store"))
    finally:
        copy.execute(sql("publish/detach_scratch"))
        scratch_file.unlink(missing_ok=True)
