"""Re-parse and re-load a range of dates in ONE Dagster run (what `gpuprice backfill` does).

Every partitioned asset has ``BackfillPolicy.single_run()`` and reads ``context.partition_keys``,
so one run covers the whole range: each provider's pages are collected and parsed in a batch
(one parse per distinct page), each provider-date partition is still replaced idempotently
(delete + insert, one transaction per batch of dates), rankings are written per date, and the
analytics copy is published once at the end. Reports are rendered only when asked, for the
weeks the range touches (a second run: they are weekly partitions).

The same run is what the Dagster UI launches for a backfill over a partition range.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from gpuprice.pipelines import progress
from gpuprice.pipelines.asset_keys import daily_selection, step_provider
from gpuprice.pipelines.instance import cli_instance
from gpuprice.pipelines.resources import default_resources
from gpuprice.pipelines.runner import _failed_step, materialize_for_cli, provider_errors
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.warehouse.connection import connect_read_only, warehouse_exists
from gpuprice.warehouse.queries import provider_runs_finished_since

RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


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
    reports: list[Path] = field(default_factory=list)
    phase_errors: list[str] = field(default_factory=list)

    @property
    def dates(self) -> int:
        return (self.end - self.start).days + 1

    @property
    def failed(self) -> list[ProviderBackfill]:
        return [p for p in self.providers if p.dates_failed]

    @property
    def other_errors(self) -> list[str]:
        return [e for e in self.phase_errors if step_provider(_failed_step(e), PROVIDERS) is None]


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
    """Backfill ``start``..``end`` (inclusive); per-date failures are recorded, not raised."""
    started = dt.datetime.now(dt.UTC)
    summary = BackfillSummary(
        start=start,
        end=end,
        source=source,
        providers=[],
        warehouse=home / "warehouse.duckdb",
        analytics=home / "analytics.duckdb",
    )
    resources = default_resources(home, source, archive_dir, workloads)  # type: ignore[arg-type]
    instance = cli_instance(home)

    def materialize(selection: dg.AssetSelection, first: str, last: str, label: str) -> None:
        _, errors = materialize_for_cli(
            selection,
            resources=resources,
            instance=instance,
            label=label,
            tags={RANGE_START_TAG: first, RANGE_END_TAG: last},
        )
        summary.phase_errors.extend(errors)

    listener = on_progress or (lambda stage, n: None)
    with progress.listening(listener):
        materialize(daily_selection(providers), start.isoformat(), end.isoformat(), "backfill")
        if render_reports:
            weeks = weeks_touched(start, end)
            materialize(
                dg.AssetSelection.assets("weekly_reports"),
                weeks[0].isoformat(),
                weeks[-1].isoformat(),
                "reports",
            )
            for monday in weeks:
                year, week, _ = monday.isocalendar()
                summary.reports += sorted((home / "reports" / f"{year}-W{week:02d}").glob("*.html"))
    instance.dispose()
    summary.providers = _outcomes(summary, providers, started)
    return summary


def _outcomes(
    summary: BackfillSummary, providers: Sequence[str], started: dt.datetime
) -> list[ProviderBackfill]:
    """Per provider, what this backfill recorded for each date of the range."""
    rows: list[tuple] = []
    if warehouse_exists(summary.warehouse):
        con = connect_read_only(summary.warehouse)
        try:
            rows = provider_runs_finished_since(con, summary.start, summary.end, started)
        finally:
            con.close()
    outcomes = {p: ProviderBackfill(provider=p) for p in providers}
    for provider, status, offers, error, day in rows:
        outcome = outcomes.get(provider)
        if outcome is None:
            continue
        if status == "success":
            outcome.dates_loaded += 1
            outcome.offers += int(offers)
        else:
            outcome.dates_failed += 1
            outcome.first_error = outcome.first_error or f"{day.isoformat()}: {error}"
    for outcome in outcomes.values():
        missing = summary.dates - outcome.dates_loaded - outcome.dates_failed
        if missing <= 0:
            continue
        errors = provider_errors(summary.phase_errors, outcome.provider)
        if summary.source == "raw" and not errors:  # nothing kept to re-parse, nothing failed
            outcome.dates_not_stored = missing
        else:  # a step failed before recording these dates
            outcome.dates_failed += missing
            outcome.first_error = outcome.first_error or (errors[0] if errors else "did not complete")
    return list(outcomes.values())
