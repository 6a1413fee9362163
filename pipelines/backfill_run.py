"""A range of days, as ``gpuprice backfill`` executes it: ``reference_data`` once, then
``daily_scrape`` (each provider's snapshot only) and ``daily_models`` over the partition range,
each one run, then the reports of every week touched when asked; per provider, what the scrape
run recorded for each date."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from gpuprice.pipelines import progress
from gpuprice.pipelines.asset_keys import provider_asset_key, provider_step
from gpuprice.pipelines.instance import cli_instance
from gpuprice.pipelines.jobs import (
    MODELS_JOB,
    REFERENCE_JOB,
    REPORTS_JOB,
    SCRAPE_JOB,
    JobRun,
    cli_definitions,
    execute_job,
    other_errors,
)
from gpuprice.pipelines.partitions import check_in_range
from gpuprice.pipelines.resources import default_resources
from gpuprice.pipelines.run_records import as_date, recorded_rows
from gpuprice.scrapers.offer import PROVIDERS


@dataclass
class ProviderBackfill:
    provider: str
    dates_loaded: int = 0
    dates_failed: int = 0
    # --source raw: dates with no kept page to parse again (their earlier record stands)
    dates_not_stored: int = 0
    offers: int = 0
    first_error: str | None = None


@dataclass
class BackfillSummary:
    start: dt.date
    end: dt.date
    source: str
    providers: list[ProviderBackfill]
    warehouse: Path
    analytics: Path
    runs: list[JobRun] = field(default_factory=list)
    reports: list[Path] = field(default_factory=list)

    @property
    def dates(self) -> int:
        return (self.end - self.start).days + 1

    @property
    def failed(self) -> list[ProviderBackfill]:
        return [p for p in self.providers if p.dates_failed]

    @property
    def other_errors(self) -> list[str]:
        return other_errors(self.runs)


def date_range(start: dt.date, end: dt.date) -> list[dt.date]:
    return [start + dt.timedelta(days=n) for n in range((end - start).days + 1)]


def weeks_touched(start: dt.date, end: dt.date) -> list[dt.date]:
    """The Mondays (weekly partition keys) of every ISO week the range touches."""
    monday = start - dt.timedelta(days=start.weekday())
    return [monday + dt.timedelta(weeks=n) for n in range((end - monday).days // 7 + 1)]


def run_backfill(
    start: dt.date,
    end: dt.date,
    *,
    source: str,
    providers: Sequence[str] = PROVIDERS,
    home: Path,
    archive_dir: Path | None = None,
    workloads: Path | None = None,
    render_reports: bool = False,
    on_progress: Callable[[str, int], None] | None = None,
) -> BackfillSummary:
    """reference_data, then daily_scrape (each provider's snapshot) and daily_models over
    ``start``..``end`` (inclusive), each one run, then the reports of every week touched when
    asked; per-date failures are recorded, not raised."""
    check_in_range(start, end, "--from/--to")
    definitions = cli_definitions(default_resources(home, source, archive_dir, workloads))  # type: ignore[arg-type]
    instance = cli_instance(home)
    span = (start.isoformat(), end.isoformat())
    summary = BackfillSummary(
        start=start,
        end=end,
        source=source,
        providers=[],
        warehouse=home / "warehouse.duckdb",
        analytics=home / "analytics.duckdb",
    )
    try:
        with progress.listening(on_progress or (lambda stage, n: None)):
            summary.runs.append(execute_job(definitions, REFERENCE_JOB, instance=instance))
            scrape = execute_job(
                definitions,
                SCRAPE_JOB,
                instance=instance,
                partition_range=span,
                asset_selection=_range_selection(providers),
            )
            summary.runs.append(scrape)
            scrape.stop_on_storage_failure(providers, home)
            summary.runs.append(execute_job(definitions, MODELS_JOB, instance=instance, partition_range=span))
            summary.runs[-1].stop_on_storage_failure(providers, home)
            if render_reports:
                weeks = weeks_touched(start, end)
                summary.runs.append(
                    execute_job(
                        definitions,
                        REPORTS_JOB,
                        instance=instance,
                        partition_range=(weeks[0].isoformat(), weeks[-1].isoformat()),
                    )
                )
                summary.runs[-1].stop_on_storage_failure(providers, home)
                for monday in weeks:
                    year, week, _ = monday.isocalendar()
                    summary.reports += sorted((home / "reports" / f"{year}-W{week:02d}").glob("*.html"))
    finally:
        instance.dispose()
    summary.providers = _backfill_outcomes(summary, providers, scrape)
    return summary


def _backfill_outcomes(
    summary: BackfillSummary, providers: Sequence[str], scrape: JobRun
) -> list[ProviderBackfill]:
    """Per provider, what the scrape run recorded for each date of the range."""
    outcomes = {p: ProviderBackfill(provider=p) for p in providers}
    for _, row in recorded_rows(summary.warehouse, scrape.run_id).iterrows():
        outcome = outcomes.get(str(row["provider"]))
        if outcome is None:
            continue
        if row["status"] == "success":
            outcome.dates_loaded += 1
            outcome.offers += int(row["offers"])
        else:
            outcome.dates_failed += 1
            day = as_date(row["snapshot_date"])
            outcome.first_error = outcome.first_error or f"{day}: {row['error']}"
    for outcome in outcomes.values():
        missing = summary.dates - outcome.dates_loaded - outcome.dates_failed
        if missing <= 0:
            continue
        step_error = scrape.failed_steps.get(provider_step(outcome.provider))
        if summary.source == "raw" and step_error is None:  # nothing kept to re-parse, nothing failed
            outcome.dates_not_stored = missing
        else:  # the step failed before recording these dates
            outcome.dates_failed += missing
            outcome.first_error = outcome.first_error or step_error or "did not complete"
    return list(outcomes.values())


def _range_selection(providers: Sequence[str]) -> list[dg.AssetKey]:
    """A backfill's scrape: each provider's snapshot. The step still collects and parses; the raw
    and parsed stages are not recorded per date (pipelines/defs/scraping/assets.py), and the
    reference data runs once beforehand (``reference_data``): in a range run Dagster plans an
    unpartitioned asset once per date of the range too."""
    return [provider_asset_key("snapshot", p) for p in providers]
