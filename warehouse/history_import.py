"""Load a price catalog's version history as dated observations (``source = 'catalog_history'``).

Two phases. First every distinct catalog file of the range is read and parsed: a file that is
not the documented layout stops the import before anything is written. Then the days are
merged in batches, each batch in one transaction, by the natural key of an offer on a day
(:data:`CATALOG_KEY`) with the one merge rule of imported history (``history_writes.merge_by_key``):
the same range twice changes nothing, and an import killed part way and run again ends with
the same rows (finished batches are unchanged, the rest are added). Each day of a provider is
made complete: an offer the day's last commit no longer lists is removed from that day.

Rows keep their provenance: ``source_file`` is ``skypilot-catalog@<commit>:<path>``,
``raw_sha256`` the sha256 of the file, ``observed_on`` (and the snapshot date) the commit's UTC
date. Days the product scraped itself keep their own rows: the catalog rows of such a provider
and day are stored (``analytics.catalog_vs_scrape`` compares them) but never in force.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import duckdb
import pandas as pd

from gpuprice.scrapers.catalog_history import CatalogDay, CatalogReader, ParsedFile, distinct_files
from gpuprice.scrapers.offer import OFFER_IDENTITY_FIELDS
from gpuprice.scrapers.skypilot_catalog import PARSER_VERSION, SOURCE_NAME, CloudCoverage
from gpuprice.sources import CATALOG_HISTORY
from gpuprice.warehouse.history_writes import merge_by_key, record_history_quarantine
from gpuprice.warehouse.sql_files import sql
from gpuprice.warehouse.tables import SNAPSHOT_COLUMNS
from gpuprice.warehouse.writes import transaction

# One offer on one day, as the catalog states it (sku = the instance type).
CATALOG_KEY: tuple[str, ...] = ("provider", *OFFER_IDENTITY_FIELDS, "observed_on")
# A known key is updated when its price, GPU or provenance (a later commit of that day) changed.
CATALOG_COMPARE: tuple[str, ...] = ("usd_per_gpu_hour", "usd_per_instance_hour", "gpu", "source_file")
DEFAULT_BATCH_DAYS = 14


@dataclass(frozen=True)
class Progress:
    """Where an import is: ``phase`` 'check' (files parsed) or 'load' (days merged)."""

    phase: str
    done: int
    total: int
    rows: int
    elapsed_s: float

    @property
    def eta_s(self) -> float | None:
        if self.done == 0 or self.done >= self.total:
            return None if self.done == 0 else 0.0
        return self.elapsed_s / self.done * (self.total - self.done)


@dataclass
class HistoryImportSummary:
    """What an import read and changed."""

    days: int = 0
    first_day: dt.date | None = None
    last_day: dt.date | None = None
    files: int = 0
    rows: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    quarantined: int = 0
    scraped_provider_days: int = 0
    coverage: dict[str, CloudCoverage] = field(default_factory=dict)
    quarantine_examples: list[tuple[str, str, str]] = field(default_factory=list)


def check_files(
    reader: CatalogReader, days: Sequence[CatalogDay], progress: Callable[[Progress], None] | None = None
) -> HistoryImportSummary:
    """Parse every distinct file of the plan once (CatalogFileError on the first bad one)."""
    summary = HistoryImportSummary(days=len(days))
    if days:
        summary.first_day, summary.last_day = days[0].day, days[-1].day
    files = distinct_files(days)
    summary.files = len(files)
    started = time.monotonic()
    for i, (file, commit) in enumerate(files, start=1):
        reader.parse(file, commit, check_only=True)
        if progress is not None:
            progress(Progress("check", i, len(files), 0, time.monotonic() - started))
    return summary


def _day_rows(
    day: CatalogDay, parsed: dict[str, ParsedFile], dumped: dict[str, list[dict]], now: dt.datetime
) -> list[dict]:
    """The day's rows (price_snapshots columns): every tracked cloud's offers, dated and sourced."""
    rows: list[dict] = []
    for file in day.files:
        result = parsed[file.blob]
        offers = dumped.get(file.blob)
        if offers is None:
            offers = dumped[file.blob] = [
                {k: v for k, v in o.model_dump().items() if k in SNAPSHOT_COLUMNS}
                for o in result.parsed.offers
            ]
        extra = {
            "snapshot_date": day.day,
            "observed_on": day.day,
            "source": CATALOG_HISTORY,
            "raw_sha256": result.sha256,
            "parser_version": PARSER_VERSION,
            "ingested_at": now,
            "source_file": f"{SOURCE_NAME}@{day.commit.commit}:{file.path}",
        }
        rows.extend({**offer, **extra} for offer in offers)
    return rows


def load_days(
    con: duckdb.DuckDBPyConnection,
    reader: CatalogReader,
    days: Sequence[CatalogDay],
    summary: HistoryImportSummary,
    *,
    batch_days: int = DEFAULT_BATCH_DAYS,
    progress: Callable[[Progress], None] | None = None,
    after_batch: Callable[[int], None] | None = None,
) -> HistoryImportSummary:
    """Merge the days in batches (one transaction each); fills the counts of ``summary``."""
    started = time.monotonic()
    done = 0
    quarantined: set[tuple[str, str]] = set()
    counted: set[str] = set()
    for start in range(0, len(days), batch_days):
        batch = days[start : start + batch_days]
        now = dt.datetime.now(dt.UTC)
        parsed: dict[str, ParsedFile] = {}
        quarantine: list[tuple[dt.date, str, str, str]] = []
        for day in batch:
            for file in day.files:
                if file.blob not in parsed:
                    parsed[file.blob] = reader.parse(file, day.commit.commit)
                    if file.blob not in counted:  # coverage over distinct files
                        counted.add(file.blob)
                        summary.coverage.setdefault(file.cloud, CloudCoverage()).add(
                            parsed[file.blob].parsed.coverage
                        )
                for provider, raw, reason in parsed[file.blob].parsed.quarantined:
                    quarantine.append((day.day, provider, raw, f"{reason} ({file.path})"))
        dumped: dict[str, list[dict]] = {}
        rows = [row for day in batch for row in _day_rows(day, parsed, dumped, now)]
        incoming = pd.DataFrame(rows, columns=list(SNAPSHOT_COLUMNS))
        with transaction(con):
            added, updated, removed = merge_by_key(
                con,
                incoming,
                source=CATALOG_HISTORY,
                key=CATALOG_KEY,
                compare=CATALOG_COMPARE,
                prune_within=("provider", "observed_on"),
            )
            record_history_quarantine(con, CATALOG_HISTORY, quarantine)
        summary.rows += len(incoming)
        summary.added += added
        summary.updated += updated
        summary.removed += removed
        summary.unchanged += len(incoming) - added - updated
        for _, provider, raw, reason in quarantine:
            if (provider, raw) not in quarantined:
                quarantined.add((provider, raw))
                if len(summary.quarantine_examples) < 10:
                    summary.quarantine_examples.append((provider, raw, reason))
        summary.quarantined = len(quarantined)
        done += len(batch)
        if progress is not None:
            progress(Progress("load", done, len(days), summary.rows, time.monotonic() - started))
        if after_batch is not None:
            after_batch(done)
    if days:
        row = con.execute(
            sql("queries/catalog_history_scraped_days"),
            {"first": days[0].day, "last": days[-1].day, "source": CATALOG_HISTORY},
        ).fetchone()
        summary.scraped_provider_days = int(row[0]) if row else 0
    return summary
