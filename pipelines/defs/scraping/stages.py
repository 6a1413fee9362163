"""A provider's three stages for the dates of one step: collect the pages, parse and check them,
load the snapshot partitions.

Plain functions with dataclasses between them, called in order by the step (``assets.py``) on one
warehouse connection; ``reporting.py`` turns their outcomes into what Dagster shows. Every date
goes the same way, one date or a range: the pages come from the scrapers layer already chosen
and parsed once per distinct page (``scrapers/days.py``), each date is checked against the runs
before it, a date that fails is recorded in ``provider_runs`` (the provider turns stale; its
earlier snapshot stays) and only the dates that passed are written, in a few transactions.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field

from gpuprice.pipelines import progress
from gpuprice.pipelines.defs.scraping.checks import CheckOutcome, RunHistory, evaluate_checks
from gpuprice.pipelines.defs.scraping.connections import step_connection
from gpuprice.pipelines.resources import ScrapeSettings, WarehouseResource
from gpuprice.scrapers.days import DayFailure, DayPage, ParsedDay, collect_days, parse_days
from gpuprice.scrapers.offer import ParseReport, ParseResult
from gpuprice.scrapers.registry import provider_parser
from gpuprice.sources import StepSource
from gpuprice.warehouse import queries, writes

# Dates per delete + insert transaction of a backfill: big enough to amortise the commit,
# small enough that an interrupted backfill keeps most of its work.
SNAPSHOT_BATCH_DATES = 366


@dataclass(frozen=True)
class StepRun:
    """What the stages of one step share: the provider, its dates (oldest first), the run."""

    provider: str
    days: list[dt.date]
    source: StepSource
    run_id: str
    started_at: dt.datetime


@dataclass(frozen=True)
class CheckFailure:
    """A date whose offers failed a blocking check: held back, its earlier snapshot kept."""

    day: dt.date
    result: ParseResult
    outcomes: tuple[CheckOutcome, ...]

    @property
    def failed_checks(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.outcomes if not o.passed)

    @property
    def message(self) -> str:
        return "check failed: " + "; ".join(f"{o.name}: {o.detail}" for o in self.outcomes if not o.passed)

    @property
    def report(self) -> ParseReport:
        return self.result.report


Failure = DayFailure | CheckFailure


@dataclass
class Collected:
    """The raw stage's outcome: per date the stored page to parse, or why there is none."""

    pages: dict[dt.date, DayPage] = field(default_factory=dict)
    failures: dict[dt.date, DayFailure] = field(default_factory=dict)


@dataclass
class Checked:
    """The parse stage's outcome: per date its parse and check outcomes, or why it has none."""

    parsed: dict[dt.date, ParsedDay] = field(default_factory=dict)  # checks passed or not
    outcomes: dict[dt.date, tuple[CheckOutcome, ...]] = field(default_factory=dict)
    failures: dict[dt.date, Failure] = field(default_factory=dict)  # unreadable, unparsed, held back
    distinct_pages: int = 0

    @property
    def passed(self) -> list[ParsedDay]:
        """The dates that passed every check, oldest first: what the snapshot stage writes."""
        return [self.parsed[day] for day in sorted(self.parsed) if day not in self.failures]


@dataclass(frozen=True)
class Loaded:
    """The snapshot stage's outcome."""

    rows: int  # rows written
    dates: int  # partitions replaced
    warehouse_rows: int  # price_snapshots' rows after the write


def record_failures(
    warehouse: WarehouseResource, run: StepRun, failures: Iterable[Failure], *, source: str
) -> None:
    """Mark the provider's runs of these dates failed, in one transaction. The previous snapshot
    of each date stays the latest."""
    rows = [
        {
            "provider": run.provider,
            "snapshot_date": failure.day,
            "source": source,
            "status": "failed",
            "offers": 0,
            "report": failure.report,
            "error": failure.message[:2000],
            "started_at": run.started_at,
            "run_id": run.run_id,
        }
        for failure in sorted(failures, key=lambda f: f.day)
    ]
    if not rows:
        return
    with step_connection(warehouse) as con:
        writes.record_provider_runs(con, rows)


def collect_stage(run: StepRun, warehouse: WarehouseResource, scrape: ScrapeSettings) -> Collected:
    """Every date's page, stored gzipped and content-addressed before anything parses it."""
    kept = {}
    if run.source == "raw":  # the pages the warehouse lists for the dates, to parse again
        with step_connection(warehouse) as con:
            kept = queries.raw_pages_to_reparse(con, run.provider, run.days[0], run.days[-1])
    found = collect_days(
        run.provider,
        run.days,
        run.source,
        home=warehouse.home_path,
        archive_dir=scrape.archive_path,
        parser_version=provider_parser(run.provider).PARSER_VERSION,
        kept=kept,
    )
    collected = Collected()
    for day, page in found.items():
        if isinstance(page, DayFailure):
            collected.failures[day] = page
        else:
            collected.pages[day] = page
    recorded = [f for f in collected.failures.values() if not f.nothing_kept]
    record_failures(warehouse, run, recorded, source=run.source)
    with step_connection(warehouse) as con:  # re-parsed pages too: a lost manifest is rebuilt
        writes.record_raw_pages(
            con, [p.model_dump() for page in collected.pages.values() for p in page.stored]
        )
    progress.advance(f"pages/{run.provider}", len(run.days))
    return collected


def parse_stage(run: StepRun, collected: Collected, warehouse: WarehouseResource) -> Checked:
    """Every date's offers and the blocking checks on them, each date against exactly the runs a
    run for that date alone would have found before it; the dates that fail are recorded."""
    parsed = parse_days(run.provider, collected.pages)
    history = RunHistory.before(warehouse, run.provider, run.days[0])
    checked = Checked(distinct_pages=parsed.distinct_pages)
    for day in run.days:
        outcome = parsed.days.get(day)
        if not isinstance(outcome, ParsedDay):  # no page (the raw stage recorded why) or no parse
            if outcome is not None:
                checked.failures[day] = outcome
            history.record(day, "failed", 0, None)
            continue
        result = outcome.result
        checked.parsed[day] = outcome
        checks = evaluate_checks(result, history.baseline(day, len(result.offers)))
        checked.outcomes[day] = checks
        if all(check.passed for check in checks):
            history.record(day, "success", len(result.offers), result.report.offers)
        else:
            checked.failures[day] = CheckFailure(day, result, checks)
            history.record(day, "failed", 0, result.report.offers)
    progress.advance(f"parse/{run.provider}", len(run.days))
    if checked.failures:
        # A re-parse records a failure under the origin of the (first failing) page.
        first = collected.pages[min(checked.failures)]
        source = first.snapshot_source if run.source == "raw" else run.source
        record_failures(warehouse, run, checked.failures.values(), source=source)
    return checked


def load_stage(run: StepRun, checked: Checked, warehouse: WarehouseResource) -> Loaded:
    """Replace each passed date's snapshot partition (delete + insert per batch)."""
    by_source: dict[str, list[writes.SnapshotPartition]] = {}
    for parsed in checked.passed:
        chosen = parsed.page
        by_source.setdefault(chosen.snapshot_source, []).append(
            writes.SnapshotPartition(
                snapshot_date=chosen.day,
                result=parsed.result,
                raw_sha256=chosen.page.sha256,
                parser_version=chosen.page.parser_version,
                started_at=run.started_at,
                observed_on=chosen.page_date,
                source_file=chosen.page.url,
                run_id=run.run_id,
            )
        )
    counts: dict[dt.date, int] = {}
    with step_connection(warehouse) as con:
        for source, partitions in by_source.items():
            for start in range(0, len(partitions), SNAPSHOT_BATCH_DATES):
                batch = partitions[start : start + SNAPSHOT_BATCH_DATES]
                counts.update(
                    writes.replace_snapshot_partitions(
                        con, provider=run.provider, source=source, partitions=batch
                    )
                )
                progress.advance(f"load/{run.provider}", len(batch))
        total = queries.snapshot_row_count(con)
    progress.advance(f"load/{run.provider}", len(run.days) - len(counts))
    return Loaded(rows=sum(counts.values()), dates=len(counts), warehouse_rows=total)
