"""gpuprice run: materialize the whole asset graph for one date, in process."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuprice.commands import metavars
from gpuprice.commands.validation import parse_date, parse_providers
from gpuprice.errors import BadInput
from gpuprice.sources import PAGE_SOURCES

if TYPE_CHECKING:
    from rich.console import Console

    from gpuprice.pipelines.day_run import ProviderOutcome, RunSummary
    from gpuprice.settings import Settings


def run(
    date: Annotated[
        str | None,
        typer.Option("--date", help="Snapshot date (default: today, UTC).", metavar=metavars.DATE),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="archive (recorded pages) or live (polite HTTP) [$GPUPRICE_SOURCE or archive].",
            metavar=metavars.choice(PAGE_SOURCES),
        ),
    ] = None,
    providers: Annotated[
        str | None,
        typer.Option("--providers", help="Comma-separated subset of providers [all].", metavar="P1,P2,..."),
    ] = None,
    reports: Annotated[
        bool, typer.Option("--reports/--no-reports", help="Render the week's reports.")
    ] = True,
) -> None:
    """Scrape (or replay) every provider for a date, then rank, publish and report."""
    from rich.console import Console

    from gpuprice.settings import Settings

    settings = Settings.from_env()
    inputs = _checked_inputs(settings, date, source, providers)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    out = Console(highlight=False, soft_wrap=True)
    started = time.perf_counter()
    summary = _run_with_progress(err, inputs, settings.warehouse_path, settings.workloads, reports)
    for p in summary.providers:
        out.print(_provider_line(p, inputs.day), markup=False)
    out.print(f"warehouse: {summary.warehouse}", markup=False)
    out.print(f"analytics: {summary.analytics}", markup=False)
    if summary.reports:
        out.print(f"reports:   {summary.reports[0].parent}", markup=False)
    _print_headlines(out, summary)
    for error in summary.other_errors:
        err.print(f"error: {error}", markup=False, highlight=False)
    err.print(f"[dim]done in {time.perf_counter() - started:.1f} s[/dim]")
    if summary.failed or summary.other_errors:
        raise typer.Exit(1)


@dataclass(frozen=True)
class _RunInputs:
    """The run's options, checked: the date, the source, the providers, the folders."""

    day: dt.date
    source: str
    providers: list[str]
    home: Path
    archive: Path


def _checked_inputs(
    settings: Settings, date: str | None, source: str | None, providers: str | None
) -> _RunInputs:
    """Every option and setting checked before Dagster starts: BadInput (one line) for the first
    that is wrong, in the order a user would fix them."""
    from gpuprice.scrapers.archive import archive_or_sample

    source = settings.source if source is None else source
    if source not in PAGE_SOURCES:
        raise BadInput(f"unknown source {source!r}; valid: archive, live")
    today = dt.datetime.now(dt.UTC).date()
    day = parse_date(date, "--date") if date is not None else today
    if source == "live" and day != today:
        raise BadInput(
            f"--date {day} with --source live: pages can only be fetched today ({today}); "
            "use --source archive to replay recorded pages"
        )
    from gpuprice.pipelines.partitions import check_in_range

    check_in_range(day, day, "--date")  # Dagster knows no partition outside: one line, not a traceback
    chosen = parse_providers(providers)
    home = settings.ensure_home()  # an unusable folder is one line now, not every step failing later
    from gpuprice.warehouse.connection import check_database_file

    check_database_file(settings.warehouse_path)  # before Dagster, whose connections retry ~100 s
    archive = archive_or_sample(settings.archive)
    if source == "archive" and not archive.is_dir():
        raise BadInput(f"archive folder {archive} does not exist (GPUPRICE_ARCHIVE)")
    if settings.workloads is not None:  # a bad GPUPRICE_WORKLOADS file: one line now, not per step
        from gpuprice.models.workloads import load_workloads

        load_workloads(settings.workloads)
    return _RunInputs(day=day, source=source, providers=chosen, home=home, archive=archive)


def _run_with_progress(
    err: Console, inputs: _RunInputs, warehouse: Path, workloads: Path | None, reports: bool
) -> RunSummary:
    """run_day with a bar of its steps on stderr; a warehouse held past GPUPRICE_LOCK_TIMEOUT, or
    too little free space, fails the run here, before any step (BadInput, one line)."""
    from gpuprice.commands.progress_display import stage_bar
    from gpuprice.disk import check_free_space
    from gpuprice.pipelines import progress
    from gpuprice.pipelines.orchestration import run_day
    from gpuprice.warehouse.connection import WarehouseBusy, wait_for_writer

    # Steps the assets report: pages, parse and load per provider, rankings, export, reports.
    steps = 3 * len(inputs.providers) + 2 + (1 if reports else 0)
    try:
        wait_for_writer(warehouse)
        check_free_space(inputs.home)
        with (
            stage_bar(f"run {inputs.day}", steps, err) as (say, advance),
            progress.listening(lambda stage, n: advance(1)),
        ):
            return run_day(
                inputs.day,
                source=inputs.source,
                providers=inputs.providers,
                home=inputs.home,
                archive_dir=inputs.archive,
                workloads=workloads,
                progress=say,
                render_reports=reports,
            )
    except WarehouseBusy as exc:  # another run kept the warehouse past the wait: one line, like bad input
        raise BadInput(str(exc)) from None


def _provider_line(p: ProviderOutcome, day: dt.date) -> str:
    """``runpod  ok  12 offers, page of ..., N days old (notes)`` or ``runpod  FAILED  <error>``."""
    from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS, STALE_AFTER_DAYS, age_days

    if p.status != "success":
        return f"{p.provider:<14} FAILED  {p.error}"
    # The page's own date and age, against the date run for: a replayed old page says so.
    age = age_days(p.observed_on, day)
    page = ""
    if p.observed_on is not None and age is not None:
        stale = (
            f" (stale: over {MAX_PRICE_AGE_DAYS} days, its prices are not used)"
            if age > MAX_PRICE_AGE_DAYS
            else " (stale)"
            if age > STALE_AFTER_DAYS
            else ""
        )
        page = f", page of {p.observed_on.isoformat()}, {age} day{'s' if age != 1 else ''} old{stale}"
    extra = []
    if p.parse_strategy == "fallback":
        extra.append("fallback")
    if p.rejected:
        extra.append(f"{p.rejected} quarantined")
    if p.unknown_gpus:
        extra.append(f"{p.unknown_gpus} unknown GPU names")
    note = f" ({', '.join(extra)})" if extra else ""
    return f"{p.provider:<14} ok      {p.offers:>4} offers{page}{note}"


HEADLINE_GPUS = ("h100-sxm", "h200-sxm", "b200")


def _print_headlines(out, summary) -> None:
    """The cheapest on-demand list price of a few GPUs, as of the run's date, with each page's age."""
    import duckdb

    if not summary.analytics.exists():
        return
    from gpuprice.warehouse.connection import connect_reader
    from gpuprice.warehouse.queries import headline_offers
    from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS, age_days

    con = connect_reader(summary.analytics)
    try:
        rows = headline_offers(con, HEADLINE_GPUS, summary.snapshot_date)
    except duckdb.Error:
        return
    finally:
        con.close()
    if rows:
        out.print(
            f"cheapest on-demand list prices as of {summary.snapshot_date.isoformat()}"
            f" (current: pages at most {MAX_PRICE_AGE_DAYS} days old):",
            markup=False,
        )
        for gpu, provider, count, community, _basis, price, observed_on in rows:
            notes = [f"{count}x"] + (["community cloud"] if community else [])
            age = age_days(observed_on, summary.snapshot_date)
            if observed_on is not None:
                notes.append(f"page of {observed_on.isoformat()}, {age} days old")
            out.print(f"  {gpu:<9} ${float(price):.2f}/GPU-h  {provider} ({', '.join(notes)})", markup=False)
    elif summary.providers:
        out.print(
            f"no on-demand list price of {', '.join(HEADLINE_GPUS)} was seen within {MAX_PRICE_AGE_DAYS} days"
            f" of {summary.snapshot_date.isoformat()}: every page is older",
            markup=False,
        )
