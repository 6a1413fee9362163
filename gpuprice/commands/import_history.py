"""gpuprice import-history SOURCE: dated prices from a public price catalog's version history."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuprice.commands import metavars
from gpuprice.errors import BadInput, unknown_choice

if TYPE_CHECKING:
    from gpuprice.scrapers.catalog_history import CatalogDay
    from gpuprice.settings import Settings
    from gpuprice.warehouse.history_import import HistoryImportSummary, Progress

DEFAULT_REPO_URL = "https://github.com/skypilot-org/skypilot-catalog"


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def import_history(
    source: Annotated[str, typer.Argument(help="History source: skypilot-catalog.", metavar="SOURCE")],
    since: Annotated[
        str | None,
        typer.Option("--from", help="First day (UTC) [the first commit].", metavar=metavars.DATE),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--to", help="Last day (UTC) [the newest commit].", metavar=metavars.DATE),
    ] = None,
    repo: Annotated[
        str | None,
        typer.Option(
            "--repo",
            help=f"Local clone (a folder) or a URL to clone into $GPUPRICE_HOME [{DEFAULT_REPO_URL}].",
            metavar="PATH_OR_URL",
        ),
    ] = None,
) -> None:
    """Load dated prices from a price catalog's git history (source = catalog_history).

    Per UTC day the catalog's last commit speaks for the day; each tracked cloud's rows
    (instance type, accelerator, region, price, spot price) become offers with the product's
    GPU mapping, merged by their natural key: the same range twice changes nothing, a run
    cut short and started again ends the same. Days gpuprice scraped itself keep their own
    rows (analytics.catalog_vs_scrape compares the two).
    """
    from gpuprice.commands.validation import parse_date
    from gpuprice.scrapers.catalog_history import SOURCES, CatalogReader
    from gpuprice.scrapers.git_history import GitHistoryError
    from gpuprice.scrapers.skypilot_catalog import CatalogFileError
    from gpuprice.settings import Settings
    from gpuprice.warehouse.connection import WarehouseBusy, writer
    from gpuprice.warehouse.history_import import check_files, load_days
    from gpuprice.warehouse.publish import publish_analytics_copy

    if source not in SOURCES:
        raise unknown_choice("history source", source, SOURCES)
    first = parse_date(since, "--from") if since is not None else None
    last = parse_date(until, "--to") if until is not None else None
    if first is not None and last is not None and first > last:
        raise BadInput(f"--from {first} is after --to {last}")
    settings = Settings.from_env()
    settings.checked_home()
    repo_dir, days = _commit_days(settings, source, repo or DEFAULT_REPO_URL, first, last)
    try:
        with CatalogReader(repo_dir) as reader:
            try:
                summary = check_files(reader, days, _progress)
            except CatalogFileError as exc:  # nothing was written
                raise BadInput(str(exc)) from None
            with writer(settings.warehouse_path) as con:
                load_days(con, reader, days, summary, progress=_progress)
                publish_analytics_copy(con, settings.warehouse_path, settings.analytics_path)
    except WarehouseBusy as exc:
        raise BadInput(str(exc)) from None
    except GitHistoryError as exc:
        raise BadInput(str(exc)) from None
    _print_summary(source, summary)


def _commit_days(
    settings: Settings, source: str, target: str, first: dt.date | None, last: dt.date | None
) -> tuple[Path, list[CatalogDay]]:
    """The clone (made or updated under $GPUPRICE_HOME for a URL) and its days with commits."""
    from gpuprice.scrapers.catalog_history import plan_days
    from gpuprice.scrapers.git_history import GitHistoryError, clone_or_update, git_dir, is_url

    try:
        if is_url(target):
            dest = settings.home / "catalog-history" / f"{source}.git"
            print(f"cloning {target} into {dest} (history from {first or 'the start'})", file=sys.stderr)
            repo_dir = git_dir(clone_or_update(target, dest, since=first))
        else:
            repo_dir = git_dir(Path(target).expanduser())
        days = plan_days(repo_dir, since=first, until=last)
    except GitHistoryError as exc:
        raise BadInput(str(exc)) from None
    if not days:
        raise BadInput(
            f"{target}: no commit with catalogs/v*/<cloud>/vms.csv of a tracked cloud"
            f" between {first or 'the start'} and {last or 'the end'}"
        )
    print(
        f"{source}: {len(days)} days with commits, {days[0].day} .. {days[-1].day}",
        file=sys.stderr,
    )
    return repo_dir, days


def _progress(p: Progress) -> None:
    if p.phase == "check":
        if p.done == p.total or p.done % 50 == 0:
            print(f"checked {p.done}/{p.total} catalog files", file=sys.stderr)
    else:
        print(
            f"days {p.done}/{p.total}, rows {p.rows}, elapsed {_eta(p.elapsed_s)}, ETA {_eta(p.eta_s)}",
            file=sys.stderr,
        )


def _print_summary(source: str, summary: HistoryImportSummary) -> None:
    """Mapping coverage per cloud and quarantine examples on stderr; the counts on stdout."""
    print(f"GPU mapping coverage over the {summary.files} distinct catalog files:", file=sys.stderr)
    for cloud, cov in sorted(summary.coverage.items()):
        share = f"{100.0 * cov.mapped_rows / cov.gpu_rows:.1f}%" if cov.gpu_rows else "-"
        print(
            f"  {cloud}: {cov.mapped_rows}/{cov.gpu_rows} GPU rows mapped ({share})",
            file=sys.stderr,
        )
    for provider, raw, reason in summary.quarantine_examples:
        print(f"  quarantined ({provider}): {raw}: {reason}", file=sys.stderr)
    typer.echo(
        f"imported {source} {summary.first_day}..{summary.last_day}: {summary.days} days, "
        f"{summary.added} added, {summary.updated} updated, {summary.unchanged} unchanged, "
        f"{summary.removed} removed, {summary.quarantined} quarantined; "
        f"{summary.scraped_provider_days} provider-days keep their own scrape"
    )
