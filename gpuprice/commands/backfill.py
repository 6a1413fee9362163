"""gpuprice backfill: re-parse and re-load a range of dates in one Dagster run."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuprice.commands import metavars
from gpuprice.commands.validation import parse_date, parse_providers
from gpuprice.errors import BadInput

if TYPE_CHECKING:
    from rich.console import Console

    from gpuprice.pipelines.backfill_run import BackfillSummary

SOURCES = ("archive", "raw")


def _first_stored(source: str, providers: list[str], archive: Path, home: Path) -> tuple[dt.date, str] | None:
    """The earliest stored page among ``providers`` (date, provider), or None when nothing is stored."""
    if source == "archive":
        from gpuprice.scrapers.archive import archive_dates

        recorded = archive_dates(archive)
        firsts = [(recorded[p][0], p) for p in providers if p in recorded]
    else:
        from gpuprice.scrapers.rawstore import stored_dates

        firsts = [(days[0], p) for p in providers if (days := stored_dates(home, p))]
    return min(firsts) if firsts else None


def validate_range(start: dt.date, end: dt.date) -> None:
    from gpuprice.pipelines.partitions import check_in_range

    if end < start:
        raise BadInput(f"empty range: --to {end} is before --from {start}; give --from <= --to")
    check_in_range(start, start, "--from")
    check_in_range(end, end, "--to")


def backfill(
    start: Annotated[str, typer.Option("--from", help="First date (inclusive).", metavar=metavars.DATE)],
    end: Annotated[str, typer.Option("--to", help="Last date (inclusive).", metavar=metavars.DATE)],
    source: Annotated[
        str,
        typer.Option(
            "--source",
            help="archive (recorded pages) or raw (pages kept in the raw store).",
            metavar=metavars.choice(SOURCES),
        ),
    ] = "archive",
    providers: Annotated[
        str | None,
        typer.Option("--providers", help="Comma-separated subset of providers [all].", metavar="P1,P2,..."),
    ] = None,
    reports: Annotated[
        bool,
        typer.Option("--reports/--no-reports", help="Render the reports of every week in the range."),
    ] = False,
) -> None:
    """Re-parse and re-load every date of a range in one run (idempotent per provider and date)."""
    from gpuprice.scrapers.archive import archive_or_sample
    from gpuprice.settings import Settings

    settings = Settings.from_env()
    if source not in SOURCES:
        raise BadInput(f"unknown source {source!r}; valid: {', '.join(SOURCES)}")
    first_day = parse_date(start, "--from")
    last_day = parse_date(end, "--to")
    validate_range(first_day, last_day)
    chosen = parse_providers(providers)
    home = settings.ensure_home()
    archive = archive_or_sample(settings.archive)
    if source == "archive" and not archive.is_dir():
        raise BadInput(f"archive folder {archive} does not exist (GPUPRICE_ARCHIVE)")
    where = f"archive {archive}" if source == "archive" else f"raw store {home / 'raw'}"
    first = _first_stored(source, chosen, archive, home)
    if first is None:
        raise BadInput(f"the {where} holds no page of {', '.join(chosen)}")
    if first_day < first[0]:
        raise BadInput(
            f"--from {first_day} is before the first stored page ({first[0]}, {first[1]}) in the {where};"
            f" valid: --from {first[0]} or later"
        )
    _run(
        first_day,
        last_day,
        source=source,
        providers=chosen,
        home=home,
        archive=archive,
        workloads=settings.workloads,
        reports=reports,
    )


def _run(
    start: dt.date,
    end: dt.date,
    *,
    source: str,
    providers: list[str],
    home: Path,
    archive: Path,
    workloads: Path | None,
    reports: bool,
) -> None:
    from rich.console import Console

    from gpuprice.warehouse.connection import WarehouseBusy

    _check_before_run(home, workloads)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    out = Console(highlight=False, soft_wrap=True)
    started = time.perf_counter()
    try:
        summary = _run_with_bar(
            err,
            start,
            end,
            source=source,
            providers=providers,
            home=home,
            archive=archive,
            workloads=workloads,
            reports=reports,
        )
    except WarehouseBusy as exc:
        raise BadInput(str(exc)) from None
    dates = (end - start).days + 1
    _print_summary(out, summary, dates, home)
    for error in summary.other_errors:
        err.print(f"error: {error}", markup=False, highlight=False)
    err.print(f"[dim]{dates} dates in {time.perf_counter() - started:.1f} s[/dim]")
    if summary.failed or summary.other_errors:
        raise typer.Exit(1)


def _check_before_run(home: Path, workloads: Path | None) -> None:
    """What fails a backfill before any step, as one line: the warehouse held past
    GPUPRICE_LOCK_TIMEOUT, too little free space, a bad GPUPRICE_WORKLOADS file."""
    from gpuprice.disk import check_free_space
    from gpuprice.warehouse.connection import WarehouseBusy, wait_for_writer

    try:
        wait_for_writer(home / "warehouse.duckdb")
    except WarehouseBusy as exc:
        raise BadInput(str(exc)) from None
    check_free_space(home)
    if workloads is not None:  # one line now, not per date and step
        from gpuprice.models.workloads import load_workloads

        load_workloads(workloads)


def _run_with_bar(
    err: Console,
    start: dt.date,
    end: dt.date,
    *,
    source: str,
    providers: list[str],
    home: Path,
    archive: Path,
    workloads: Path | None,
    reports: bool,
) -> BackfillSummary:
    """run_backfill, with a bar of dates done on stderr."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from gpuprice.pipelines.orchestration import run_backfill

    dates = (end - start).days + 1
    # Each date passes 3 stages per provider (pages, parse, load), then rankings and export.
    stages = 3 * len(providers) + 2
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("dates"),
        TimeRemainingColumn(),
        console=err,
        transient=False,
    )
    task = bar.add_task(f"backfill {start}..{end}", total=dates)

    def advance(stage: str, n: int) -> None:
        if stage != "reports":
            bar.advance(task, n / stages)

    with bar:
        summary = run_backfill(
            start,
            end,
            source=source,
            providers=providers,
            home=home,
            archive_dir=archive,
            workloads=workloads,
            render_reports=reports,
            on_progress=advance,
        )
        bar.update(task, completed=dates)
    return summary


def _print_summary(out: Console, summary: BackfillSummary, dates: int, home: Path) -> None:
    """One line per provider, then where the warehouse, the analytics copy and the reports are."""
    for p in summary.providers:
        if p.dates_failed:
            out.print(
                f"{p.provider:<14} FAILED  {p.dates_loaded}/{dates} dates loaded; {p.dates_failed} failed,"
                f" first: {p.first_error}",
                markup=False,
            )
        else:
            unstored = (
                f"; {p.dates_not_stored} with no kept page (left as recorded)" if p.dates_not_stored else ""
            )
            out.print(
                f"{p.provider:<14} ok      {p.dates_loaded}/{dates} dates, {p.offers} offers{unstored}",
                markup=False,
            )
    out.print(f"warehouse: {summary.warehouse}", markup=False)
    out.print(f"analytics: {summary.analytics}", markup=False)
    if summary.reports:
        out.print(f"reports:   {len(summary.reports)} files under {home / 'reports'}", markup=False)
