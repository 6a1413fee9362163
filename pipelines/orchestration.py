"""One orchestration for the schedule, ``gpuprice run`` and ``gpuprice backfill``: the code
location's named jobs, on the instance under ``$GPUPRICE_HOME/dagster``.

A scheduled day is ``daily_scrape`` for the day's partition (reference data and every provider),
then ``daily_models`` (the models sensor starts it when the scrape run ends, succeeded or
failed), and ``weekly_reports_job`` for the week. ``gpuprice run`` executes the same jobs for the
same partition, one after the other, in this process (``JobDefinition.execute_in_process``), so
its runs show in the UI under those job names; ``gpuprice backfill`` executes them over a
partition range, each as one run (every partitioned asset has ``BackfillPolicy.single_run()``,
as a backfill launched from the UI), after ``reference_data`` once, with only the providers'
snapshots selected in the scrape (Dagster stores a planned and a done event per selected asset
and date, and five years of raw and parsed stages tripled them). A provider's outcome is what the scrape run recorded in the
warehouse's ``provider_runs`` under its run id.
"""

from __future__ import annotations

import datetime as dt
import logging
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd

from gpuprice.disk import NoSpace, full_disk_text_message
from gpuprice.errors import BadInput
from gpuprice.pipelines import progress
from gpuprice.pipelines.asset_keys import (
    REFERENCE_ASSETS,
    provider_asset_key,
    provider_asset_keys,
    provider_step,
    step_provider,
)
from gpuprice.pipelines.defs.scraping.assets import STEP_RETRIES_TAG
from gpuprice.pipelines.instance import cli_instance, cli_run_tags
from gpuprice.pipelines.partitions import check_in_range
from gpuprice.pipelines.resources import default_resources
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.warehouse.connection import WarehouseBusy, connect_read_only, warehouse_exists
from gpuprice.warehouse.queries import provider_runs_of_run

CODE_LOCATION = "gpuprice.pipelines.definitions"
SCRAPE_JOB = "daily_scrape"
MODELS_JOB = "daily_models"
REPORTS_JOB = "weekly_reports_job"
REFERENCE_JOB = "reference_data"
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"
# The CLI prints its own progress: Dagster's console log stays quiet.
_QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


@dataclass
class JobRun:
    """One executed job: its run id, whether it succeeded, and each failed step's error."""

    job: str
    run_id: str
    success: bool
    failed_steps: dict[str, str] = field(default_factory=dict)  # step key -> first line of the error
    busy: str | None = None  # the first step that found the warehouse locked past the wait (its error)

    def stop_on_storage_failure(self, providers: Sequence[str], home: Path) -> None:
        """One line (exit 2 in the CLI) instead of a list of failed steps when the storage under
        the run failed it: WarehouseBusy when another process took the warehouse while the run was
        under way, NoSpace when the disk filled; naming the providers whose step landed before."""
        full = None
        if self.busy is None:
            full = next(
                (m for m in (full_disk_text_message(e, home) for e in self.failed_steps.values()) if m), None
            )
            if full is None:
                return
        landed = [p for p in providers if provider_step(p) not in self.failed_steps]
        if self.job != SCRAPE_JOB:
            place = f"the providers landed, {self.job} did not finish"
        else:
            rest = [p for p in providers if p not in landed]
            place = f"landed: {', '.join(landed) or 'none'}; not landed: {', '.join(rest) or 'none'}"
        if full is not None:
            raise NoSpace(f"{full}; the run stopped ({place})")
        raise WarehouseBusy(f"{self.busy}; the run stopped ({place})")


def load_code_location() -> dg.Definitions:
    """The code location's definitions; BadInput naming the module and the cause when it fails to load."""
    try:
        from gpuprice.pipelines.definitions import defs
    except BadInput:
        raise
    except Exception as exc:
        cause: BaseException = exc
        while cause.__cause__ is not None:
            cause = cause.__cause__
        if isinstance(cause, BadInput):
            raise cause from None
        detail = (str(cause).strip().splitlines() or [""])[0]
        raise BadInput(
            f"the Dagster code location {CODE_LOCATION} failed to load: {type(cause).__name__}: {detail}"
        ) from None
    return defs


def cli_definitions(resources: Mapping[str, Any]) -> dg.Definitions:
    """The code location's assets, checks and jobs, bound to the CLI's resources (its --source)."""
    defs = load_code_location()
    return dg.Definitions(
        assets=defs.assets, asset_checks=defs.asset_checks, jobs=defs.jobs, resources=dict(resources)
    )


def execute_job(
    definitions: dg.Definitions,
    job: str,
    *,
    instance: dg.DagsterInstance,
    partition_key: str | None = None,
    partition_range: tuple[str, str] | None = None,
    asset_selection: Sequence[dg.AssetKey] | None = None,
) -> JobRun:
    """Execute the job ``job`` in this process for one partition or a range; never raises for a
    failed step (the run records it). No step retries: the fetcher already retried, and nobody at
    a terminal should wait 30-90 s more."""
    tags = {STEP_RETRIES_TAG: "off", **cli_run_tags()}
    if partition_range is not None:
        tags |= {RANGE_START_TAG: partition_range[0], RANGE_END_TAG: partition_range[1]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.getLogger("dagster").setLevel(logging.ERROR)
        result = definitions.resolve_job_def(job).execute_in_process(
            run_config=_QUIET,
            instance=instance,
            partition_key=partition_key,
            asset_selection=asset_selection,
            tags=tags,
            raise_on_error=False,
        )
    failed, busy = _failed_steps(result)
    return JobRun(job=job, run_id=result.run_id, success=result.success, failed_steps=failed, busy=busy)


def _failed_steps(result: dg.ExecuteInProcessResult) -> tuple[dict[str, str], str | None]:
    """Each failed step's first error line, and the first WarehouseBusy among them (or None)."""
    failed = {}
    busy = None
    for event in result.get_step_failure_events():
        error = event.step_failure_data.error
        while error is not None and error.cause is not None:  # the user's exception, not Dagster's wrapper
            error = error.cause
        message = (error.message if error is not None else "").strip()
        failed[event.step_key or ""] = message.splitlines()[0] if message else "failed"
        if busy is None and error is not None and error.cls_name == WarehouseBusy.__name__:
            busy = message.splitlines()[0].removeprefix(
                f"{WarehouseBusy.__module__}.{WarehouseBusy.__name__}: "
            )
    return failed, busy


def _scrape_selection(providers: Sequence[str]) -> list[dg.AssetKey]:
    return [dg.AssetKey(key) for key in REFERENCE_ASSETS] + provider_asset_keys(providers)


def _range_selection(providers: Sequence[str]) -> list[dg.AssetKey]:
    """A backfill's scrape: each provider's snapshot. The step still collects and parses; the raw
    and parsed stages are not recorded per date (pipelines/defs/scraping/assets.py), and the
    reference data runs once beforehand (``reference_data``): in a range run Dagster plans an
    unpartitioned asset once per date of the range too."""
    return [provider_asset_key("snapshot", p) for p in providers]


def _other_errors(runs: Sequence[JobRun]) -> list[str]:
    """Failed steps outside the providers' own steps (reference data, models, publishing, reports)."""
    return [
        f"{run.job}: {step}: {message}"
        for run in runs
        for step, message in run.failed_steps.items()
        if step_provider(step, PROVIDERS) is None
    ]


def _recorded(warehouse: Path, run_id: str) -> pd.DataFrame:
    """provider_runs rows the run ``run_id`` wrote (empty when the warehouse was never made)."""
    if not warehouse_exists(warehouse):
        return pd.DataFrame(columns=["provider", "snapshot_date", "status", "offers", "error"])
    con = connect_read_only(warehouse)
    try:
        return provider_runs_of_run(con, run_id)
    finally:
        con.close()


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _as_date(value: object) -> dt.date | None:
    if value is None or value is pd.NaT or (isinstance(value, float) and value != value):
        return None
    return pd.Timestamp(value).date()  # type: ignore[arg-type]


# ----- one day: gpuprice run ----------------------------------------------------------------------


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
        return _other_errors(self.runs)


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
    recorded = _recorded(summary.warehouse, scrape.run_id)
    rows = {str(r["provider"]): r for _, r in recorded.iterrows()}
    for provider in providers:
        row = rows.get(provider)
        if row is None:  # the step ended before it recorded anything
            error = scrape.failed_steps.get(provider_step(provider), "did not complete")
            summary.providers.append(ProviderOutcome(provider=provider, status="failed", error=error))
            continue
        summary.providers.append(
            ProviderOutcome(
                provider=provider,
                status=str(row["status"]),
                offers=int(row["offers"]),
                rejected=int(row["rejected"]),
                unknown_gpus=int(row["unknown_gpus"]),
                error=_text(row["error"]),
                parse_strategy=_text(row["parse_strategy"]),
                observed_on=_as_date(row["observed_on"]),
            )
        )
    return summary


# ----- a range of days: gpuprice backfill -----------------------------------------------------------


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
        return _other_errors(self.runs)


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
    for _, row in _recorded(summary.warehouse, scrape.run_id).iterrows():
        outcome = outcomes.get(str(row["provider"]))
        if outcome is None:
            continue
        if row["status"] == "success":
            outcome.dates_loaded += 1
            outcome.offers += int(row["offers"])
        else:
            outcome.dates_failed += 1
            day = _as_date(row["snapshot_date"])
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
