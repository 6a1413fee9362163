"""The rows a snapshot partition write stores, built from the scrapers' parses (no database here).

``writes.replace_snapshot_partitions`` writes them: price_snapshots rows (a frame of the offers'
own columns per distinct parse, inserted once per partition with the partition's values of the
other columns), quarantine rows and provider_runs rows in the tables' column order
(warehouse/tables.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from gpuprice.scrapers.offer import Offer, ParseReport, ParseResult
from gpuprice.warehouse.tables import PROVIDER_RUN_COLUMNS, SNAPSHOT_COLUMNS


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# The price_snapshots columns an offer fills itself; the rest are the partition's (WRITER_COLUMNS).
OFFER_COLUMNS: tuple[str, ...] = tuple(c for c in SNAPSHOT_COLUMNS if c in Offer.model_fields)
WRITER_COLUMNS: tuple[str, ...] = tuple(c for c in SNAPSHOT_COLUMNS if c not in OFFER_COLUMNS)


def offer_columns(offers: Sequence[Offer]) -> pd.DataFrame:
    """The offers' own columns of price_snapshots (OFFER_COLUMNS), one row per offer.

    Read from each offer's field values as they are (a model's ``__dict__``: the values
    ``model_dump`` returns for these plain fields, without building a new dict per offer): a day
    of an all-region provider is ~60,000 offers, and dumping them took longer than writing them."""
    return pd.DataFrame.from_records([offer.__dict__ for offer in offers], columns=list(OFFER_COLUMNS))


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
    frame = offer_columns(offers).assign(
        snapshot_date=snapshot_date,
        source=source,
        raw_sha256=raw_sha256,
        parser_version=parser_version,
        ingested_at=ingested_at or utc_now(),
        observed_on=observed_on or snapshot_date,
        source_file=source_file,
    )
    return frame.reindex(columns=list(SNAPSHOT_COLUMNS))


@dataclass(frozen=True)
class SnapshotPartition:
    """One (provider, snapshot_date) partition to write: the parse that fills it and its page."""

    snapshot_date: dt.date
    result: ParseResult
    raw_sha256: str | None
    parser_version: str | None
    started_at: dt.datetime | None = None
    observed_on: dt.date | None = None  # the page's own date; None: the snapshot date (a live page)
    source_file: str | None = None  # the page: URL or archive file name
    run_id: str | None = None  # the Dagster run writing it (provider_runs.run_id)

    @property
    def observed(self) -> dt.date:
        return self.observed_on or self.snapshot_date


@dataclass(frozen=True)
class PartitionInsert:
    """One partition's snapshot rows: the offers of a parse (``PartitionRows.offers[parse]``) with
    the partition's own values of WRITER_COLUMNS (a parse replayed on many dates is one frame)."""

    parse: int
    values: dict[str, object]


@dataclass
class PartitionRows:
    """What a batch of partitions writes: snapshot rows, quarantine rows, provider_runs rows."""

    offers: list[pd.DataFrame] = field(default_factory=list)  # OFFER_COLUMNS, one frame per distinct parse
    inserts: list[PartitionInsert] = field(default_factory=list)  # price_snapshots rows, per partition
    rejected: list[list[object]] = field(default_factory=list)  # quarantine rows
    runs: list[list[object]] = field(default_factory=list)  # provider_runs rows, one per date
    counts: dict[dt.date, int] = field(default_factory=dict)  # snapshot rows per date

    @property
    def dates(self) -> list[dt.date]:
        return sorted(self.counts)


def partition_rows(
    provider: str,
    source: str,
    partitions: Sequence[SnapshotPartition],
    *,
    with_report: bool,
    now: dt.datetime,
) -> PartitionRows:
    """The rows of every partition; a parse shared by several dates becomes one frame of offers."""
    rows = PartitionRows()
    parses: dict[int, int] = {}  # id(parse result) -> its frame in rows.offers
    for part in partitions:
        index = parses.get(id(part.result))
        if index is None:
            index = parses[id(part.result)] = len(rows.offers)
            rows.offers.append(offer_columns(part.result.offers))
        count = len(rows.offers[index])
        if count:
            values = {
                "snapshot_date": part.snapshot_date,
                "source": source,
                "raw_sha256": part.raw_sha256,
                "parser_version": part.parser_version,
                "ingested_at": now,
                "observed_on": part.observed,
                "source_file": part.source_file,
            }
            rows.inserts.append(PartitionInsert(index, values))
        rows.counts[part.snapshot_date] = count
        report = part.result.report
        rows.rejected.extend(
            [part.snapshot_date, provider, r.raw, r.reason, part.raw_sha256, source, now]
            for r in report.rejected
        )
        rows.runs.append(
            provider_run_row(
                provider=provider,
                snapshot_date=part.snapshot_date,
                source=source,
                status="success",
                offers=count,
                report=report if with_report else None,
                error=None,
                started_at=part.started_at or now,
                finished_at=now,
                observed_on=part.observed,
                run_id=part.run_id,
            )
        )
    return rows


def provider_run_row(
    *,
    provider: str,
    snapshot_date: dt.date,
    source: str,
    status: str,
    offers: int,
    report: ParseReport | None,
    error: str | None,
    started_at: dt.datetime,
    finished_at: dt.datetime | None = None,
    observed_on: dt.date | None = None,
    run_id: str | None = None,
) -> list[object]:
    """A provider_runs row, in the order of ``PROVIDER_RUN_COLUMNS``."""
    row = {
        "snapshot_date": snapshot_date,
        "provider": provider,
        "source": source,
        "status": status,
        "offers": offers,
        "rejected": len(report.rejected) if report else 0,
        "unknown_gpus": len(report.unknown_gpus) if report else 0,
        "error": error,
        "parse_report": report.model_dump_json() if report else None,
        "started_at": started_at,
        "finished_at": finished_at or utc_now(),
        "parse_strategy": report.parse_strategy if report else None,
        "observed_on": observed_on if status == "success" else None,  # a failure observed nothing
        "run_id": run_id,
    }
    return [row[c] for c in PROVIDER_RUN_COLUMNS]
