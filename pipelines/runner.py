"""Materialize the asset graph for one date in process (what `gpuprice run` does).

The graph runs in phases, like the scheduled jobs: reference data, the providers' scrape,
then models and publishing, then the week's reports. Later phases run even when a provider
failed, so one provider's failure never stops the others from landing and being published.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import pandas as pd

from gpuprice.pipelines.asset_keys import MODEL_ASSETS, daily_selection, step_provider
from gpuprice.pipelines.defs.scraping.assets import STEP_RETRIES_TAG
from gpuprice.pipelines.instance import cli_instance, cli_run_tags
from gpuprice.pipelines.resources import WarehouseResource, default_resources
from gpuprice.pipelines.run_connection import sharing_connection
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.warehouse.connection import connect_read_only, warehouse_exists


def provider_errors(phase_errors: Sequence[str], provider: str) -> list[str]:
    """The step failures ("<phase>: <step key>: <message>") of ``provider``'s own stage assets."""
    return [e for e in phase_errors if step_provider(_failed_step(e), [provider]) is not None]


def _failed_step(phase_error: str) -> str:
    parts = phase_error.split(": ", 2)
    return parts[1] if len(parts) == 3 else ""


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
    reports: list[Path] = field(default_factory=list)
    phase_errors: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[ProviderOutcome]:
        return [p for p in self.providers if p.status != "success"]

    @property
    def other_errors(self) -> list[str]:
        """Step failures outside the providers' own assets (models, publishing, reports)."""
        return [e for e in self.phase_errors if step_provider(_failed_step(e), PROVIDERS) is None]


def _as_date(value: object) -> dt.date | None:
    if value is None or value is pd.NaT or (isinstance(value, float) and value != value):
        return None
    return pd.Timestamp(value).date()  # type: ignore[arg-type]


def _all_definitions() -> list:
    from gpuprice.pipelines.definitions import defs

    return [*(defs.assets or []), *(defs.asset_checks or [])]


def materialize_for_cli(
    selection: dg.AssetSelection,
    *,
    resources: dict,
    instance: dg.DagsterInstance,
    label: str,
    partition_key: str | None = None,
    tags: dict[str, str] | None = None,
    definitions: Sequence | None = None,
) -> tuple[dg.ExecuteInProcessResult, list[str]]:
    """One in-process run of ``selection`` for ``gpuprice run``/``backfill``, and its step errors
    (each prefixed with ``label``).

    Dagster's console log and warnings stay quiet (the CLI prints its own progress); no step
    retries: the fetcher already retried, and nobody at a terminal should wait 30-90 s more; the
    run is tagged so a later CLI run can tell whether its process is still alive; its steps share
    one warehouse connection (``run_connection.py``). ``definitions`` replaces the code location's
    assets and checks (the benchmark's empty graph)."""
    warehouse = resources.get("warehouse")
    sharing = (
        sharing_connection(warehouse.database)
        if isinstance(warehouse, WarehouseResource)
        else contextlib.nullcontext()
    )
    with warnings.catch_warnings(), sharing:
        warnings.simplefilter("ignore")
        logging.getLogger("dagster").setLevel(logging.ERROR)
        result = dg.materialize(
            _all_definitions() if definitions is None else definitions,
            selection=selection,
            partition_key=partition_key,
            resources=resources,
            instance=instance,
            raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}},
            tags={**(tags or {}), "gpuprice/phase": label, STEP_RETRIES_TAG: "off", **cli_run_tags()},
        )
    return result, [f"{label}: {e}" for e in _step_errors(result)]


def _skipped_models(result: dg.ExecuteInProcessResult) -> list[str]:
    """The model assets whose step never started, in graph order: Dagster leaves out (without an
    event) every step downstream of a failed one."""
    started = {e.step_key for e in result.all_events if e.event_type_value == "STEP_START"}
    return [key for key in MODEL_ASSETS if key not in started]  # their step keys are their names


def _step_errors(result: dg.ExecuteInProcessResult) -> list[str]:
    errors = []
    for event in result.all_events:
        if event.event_type_value == "STEP_FAILURE":
            error = getattr(event.event_specific_data, "error", None)
            while (
                error is not None and error.cause is not None
            ):  # the user's exception, not Dagster's wrapper
                error = error.cause
            message = (error.message if error is not None else "").strip()
            errors.append(f"{event.step_key}: {message.splitlines()[0] if message else 'failed'}")
    return errors


def run_day(
    day: dt.date,
    *,
    source: str,
    providers: Sequence[str] = PROVIDERS,
    home: Path,
    archive_dir: Path | None = None,
    workloads: Path | None = None,
    progress: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr),
    render_reports: bool = True,
) -> RunSummary:
    """Run every phase for ``day``; provider failures are recorded, not raised."""
    from gpuprice.warehouse.queries import provider_run_status

    started = dt.datetime.now(dt.UTC)
    resources = default_resources(home, source, archive_dir, workloads)
    instance = cli_instance(home)
    partition = day.isoformat()
    summary = RunSummary(
        snapshot_date=day,
        source=source,
        providers=[],
        warehouse=home / "warehouse.duckdb",
        analytics=home / "analytics.duckdb",
    )

    def materialize(
        selection: dg.AssetSelection, partition_key: str | None, label: str
    ) -> dg.ExecuteInProcessResult:
        result, errors = materialize_for_cli(
            selection, resources=resources, instance=instance, label=label, partition_key=partition_key
        )
        summary.phase_errors.extend(errors)
        return result

    if render_reports:
        from gpuprice.reports import drawing

        # The day's run keeps one CPU busy: the chart helper loads matplotlib on the other
        # meanwhile, and draws from the reports' first chart on.
        drawing.prestart_helper()
    try:
        # One Dagster run for reference data, the providers and the models: each run costs its
        # own bookkeeping (~0.15 s). A provider whose step fails makes Dagster skip the models
        # downstream of it; those then run in a second run, since one provider's failure never
        # stops the rest from being ranked and published.
        progress("[1/4] reference data: GPU catalog, public price history, memory-fit sweep")
        progress(f"[2/4] providers ({source}, {partition}): {', '.join(providers)}")
        progress("[3/4] then offers with specs, workload rankings, analytics copy and Parquet export")
        run = materialize(daily_selection(providers), partition, "run")
        skipped = _skipped_models(run)
        if skipped:
            models = materialize(dg.AssetSelection.assets(*skipped), partition, "models")
            if "analytics_copy" in _skipped_models(models):
                # Published even when a model step failed: analysts still get the day's prices.
                materialize(dg.AssetSelection.assets("analytics_copy"), partition, "publish")

        if render_reports:
            year, week, weekday = day.isocalendar()
            monday = day - dt.timedelta(days=weekday - 1)
            progress(f"[4/4] weekly reports for {year}-W{week:02d}")
            rendered = materialize(dg.AssetSelection.assets("weekly_reports"), monday.isoformat(), "reports")
            folder = home / "reports" / f"{year}-W{week:02d}"
            # Only a rendering that finished wrote every file; a failed one (a full disk) names none.
            if rendered.success and folder.exists():
                summary.reports = sorted(folder.glob("*.html"))
    finally:
        if render_reports:
            drawing.end_prestarted_helper()  # when no drawer took it
    instance.dispose()

    status = None
    if warehouse_exists(summary.warehouse):
        # Every writer step of this run has finished; another run may be writing (it waits for us).
        con = connect_read_only(summary.warehouse)
        try:
            status = provider_run_status(con, day).set_index("provider")
        finally:
            con.close()
    for provider in providers:
        # Only a row this run wrote tells how this run went: a step that failed before recording
        # its outcome leaves an earlier run's row for the date in place.
        if status is not None and provider in status.index and status.loc[provider, "finished_at"] >= started:
            row = status.loc[provider]
            summary.providers.append(
                ProviderOutcome(
                    provider=provider,
                    status=str(row["status"]),
                    offers=int(row["offers"]),
                    rejected=int(row["rejected"]),
                    unknown_gpus=int(row["unknown_gpus"]),
                    parse_strategy=row["parse_strategy"] if isinstance(row["parse_strategy"], str) else None,
                    error=None if row["error"] is None or str(row["error"]) == "nan" else str(row["error"]),
                    observed_on=_as_date(row["observed_on"]),
                )
            )
        else:
            errors = provider_errors(summary.phase_errors, provider)
            summary.providers.append(
                ProviderOutcome(
                    provider=provider, status="failed", error=errors[0] if errors else "did not complete"
                )
            )
    return summary
