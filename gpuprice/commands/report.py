"""gpuprice report: write the weekly cost reports and print their paths."""

from __future__ import annotations

from typing import Annotated

import typer

from gpuprice.commands import metavars


def report(
    week: Annotated[
        str | None,
        typer.Option(
            "--week", help="ISO week (default: the week of the newest snapshot).", metavar=metavars.WEEK
        ),
    ] = None,
    workload: Annotated[
        str | None,
        typer.Option(
            "--workload", help="Only this workload's pages (index and summary always).", metavar="NAME"
        ),
    ] = None,
) -> None:
    """Write the weekly reports under $GPUPRICE_HOME/reports/<YYYY-Www>/ and print their paths."""
    from gpuprice.reports.render import RENDER_STAGES, render_weekly_reports
    from gpuprice.reports.weeks import IsoWeek
    from gpuprice.reports.workload_info import load_catalog
    from gpuprice.settings import Settings

    # Check the week's form before opening the warehouse: a typo fails fast with exit 2.
    parsed = IsoWeek.parse(week) if week is not None else None
    settings = Settings.from_env()
    settings.checked_home()
    from rich.console import Console

    from gpuprice.commands.progress_display import stage_bar

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    with stage_bar("report", len(RENDER_STAGES), err, log_lines=False) as (say, advance):

        def stage(message: str) -> None:
            say(message)
            advance(1)

        paths = render_weekly_reports(
            parsed,
            analytics_file=settings.analytics_path,
            out_root=settings.reports_dir,
            workload=workload,
            catalog=load_catalog(settings.workloads),
            progress=stage,
        )
    for path in paths:
        typer.echo(str(path))
