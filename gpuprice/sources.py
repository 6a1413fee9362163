"""Where prices come from: one definition of the source values every layer uses.

A run reads pages from a *page source* (``--source``): ``live`` (polite HTTP) or ``archive``
(recorded pages). What it loads is stored with a *snapshot source* in ``price_snapshots.source``
and ``quarantine.source``: a live run is a ``scrape``, a replay is an ``archive``, and cited
public observations loaded as history are ``public_report``, and dated prices imported from a
public price catalog's version history (``gpuprice import-history``) are ``catalog_history``. The views, the reports and the
partition replacement select scraped rows with :data:`SCRAPED_SOURCES`.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

PageSource = Literal["live", "archive"]
PAGE_SOURCES: tuple[PageSource, ...] = get_args(PageSource)

# What a step may read pages from: a page source, or (`gpuprice backfill --source raw`) the pages
# already kept in the raw store, parsed again, each keeping its snapshot source.
StepSource = Literal["live", "archive", "raw"]

SnapshotSource = Literal["scrape", "archive", "public_report", "catalog_history"]
PUBLIC_REPORT: Final = "public_report"
CATALOG_HISTORY: Final = "catalog_history"
# A provider's daily partition: what a run writes and replaces.
SCRAPED_SOURCES: tuple[SnapshotSource, ...] = ("scrape", "archive")
# Prices imported as history (cited reports, catalog history): every other snapshot source.
IMPORTED_SOURCES: tuple[SnapshotSource, ...] = tuple(
    s for s in get_args(SnapshotSource) if s not in SCRAPED_SOURCES
)
SNAPSHOT_SOURCE_OF: dict[PageSource, SnapshotSource] = {"live": "scrape", "archive": "archive"}


def sql_values(values: tuple[str, ...]) -> str:
    """``('scrape', 'archive')``: a tuple of these fixed names as an SQL IN list."""
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"
