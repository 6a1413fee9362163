"""One day, as ``gpuprice run`` executes it: ``daily_scrape`` for the day's partition, then
``daily_models``, then (when asked) ``weekly_reports_job`` for the day's week; each provider's
outcome as the scrape run recorded it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from gpuprice.pipelines.asset_keys import REFERENCE_ASSETS, provider_asset_keys, provider_step
from gpuprice.pipelines.instance import cli_instance
from gpuprice.pipelines.jobs import (
    MODELS_JOB,
    REPORTS_JOB,
    SCRAPE_JOB,
    JobRun,
    cli_definitions,
    execute_job,
    other_errors,
)
from gpuprice.pipelines.partitions import check_in_range
from gpuprice.pipelines.resources import default_resources
from gpuprice.pipelines.run_records import as_date, recorded_rows, text_or_none
from gpuprice.scrapers.offer import PROVIDERS


@dataclass
class ProviderOutcome:
    provider: str
    status: str  # success | failed
    offers: int = 0
    rejected: int = 0
    unknown_gpus: int = 0
    error: str | None = None
    parse_strategy: str | None = None
    observed_on: dt.date | None = None  # the date of the page the offers were read from


@dataclass
class RunSummary:
    snapshot_date: dt.date
    source: str
    providers: list[ProviderOutcome]
    warehouse: Path
    analytics: Path
    runs: list[JobRun] = field(default_factory=list)
    reports: list[Path] = field(default_factory=list)

    @property
    def failed(self) -> list[ProviderOutcome]:
        return [p for p in self.providers if p.status != "success"]

    @property
    def other_errors(self) -> list[str]:
        return other_errors(self.runs)


def run_day(
    day: dt.date,
    *,
    source: str,
    providers: Sequence[str] = PROVIDERS,
    home: Path,
    archive_dir: Path | None = None,
    workloads: Path | None = None,
    progress: Callable[[str], None] = lambda msg: None,
    render_reports: bool = True,
) -> RunSummary:
    """The scheduled day for ``day``: daily_scrape, daily_models, then (when asked) the week's
    reports. Provider failures are recorded, not raised."""
    check_in_range(day, day, "--date")
    definitions = cli_definitions(default_resources(home, source, archive_dir, workloads))  # type: ignore[arg-type]
    instance = cli_instance(home)
    partition = day.isoformat()
    summary = RunSummary(
        snapshot_date=day,
        source=source,
        providers=[],
        warehouse=home / "warehouse.duckdb",
        analytics=home / "analytics.duckdb",
    )
    try:
        progress(f"[1/3] {SCRAPE_JOB} {partition} ({source}): reference data, then {', '.join(providers)}")
        scrape = execute_job(
            definitions,
            SCRAPE_JOB,
            instance=instance,
            partition_key=partition,
            asset_selection=_scrape_selection(providers),
        )
        summary.runs.append(scrape)
        scrape.stop_on_storage_failure(providers, home)
        progress(f"[2/3] {MODELS_JOB} {partition}: offers with specs, rankings, analytics copy and Parquet")
        summary.runs.append(execute_job(definitions, MODELS_JOB, instance=instance, partition_key=partition))
        summary.runs[-1].stop_on_storage_failure(providers, home)
        if render_reports:
            year, week, weekday = day.isocalendar()
            monday = day - dt.timedelta(days=weekday - 1)
            progress(f"[3/3] {REPORTS_JOB} {year}-W{week:02d}")
            reports = execute_job(
                definitions, REPORTS_JOB, instance=instance, partition_key=monday.isoformat()
            )
            summary.runs.append(reports)
            reports.stop_on_storage_failure(providers, home)
            folder = home / "reports" / f"{year}-W{week:02d}"
            # Only a rendering that finished wrote every file; a failed one (a full disk) names none.
            if reports.success and folder.exists():
                summary.reports = sorted(folder.glob("*.html"))
    finally:
        instance.dispose()
    summary.providers = _provider_outcomes(summary, providers, scrape)
    return summary


def _provider_outcomes(
    summary: RunSummary, providers: Sequence[str], scrape: JobRun
) -> list[ProviderOutcome]:
    """Per provider, what the scrape run recorded (or its step's error when it recorded nothing)."""
    outcomes: list[ProviderOutcome] = []
    recorded = recorded_rows(summary.warehouse, scrape.run_id)
    rows = {str(r["provider"]): r for _, r in recorded.iterrows()}
    for provider in providers:
        row = rows.get(provider)
        if row is None:  # the step ended before it recorded anything
            error = scrape.failed_steps.get(provider_step(provider), "did not complete")
            outcomes.append(ProviderOutcome(provider=provider, status="failed", error=error))
            continue
        outcomes.append(
            ProviderOutcome(
                provider=provider,
                status=str(row["status"]),
                offers=int(row["offers"]),
                rejected=int(row["rejected"]),
                unknown_gpus=int(row["unknown_gpus"]),
                error=text_or_none(row["error"]),
                parse_strategy=text_or_none(row["parse_strategy"]),
                observed_on=as_date(row["observed_on"]),
            )
        )
    return outcomes


def _scrape_selection(providers: Sequence[str]) -> list[dg.AssetKey]:
    return [dg.AssetKey(key) for key in REFERENCE_ASSETS] + provider_asset_keys(providers)
