"""gpuprice import-observations FILE.csv: merge cited public prices into the history (source = public_report)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuprice.errors import BadInput


def import_observations(
    file: Annotated[Path, typer.Argument(help="CSV in the observed_prices.csv format.", metavar="FILE.csv")],
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="First delete every row earlier imports added (never the bundled history); says how many.",
        ),
    ] = False,
) -> None:
    """Merge cited price observations into the warehouse by their natural key.

    The key is provider, gpu (as written), gpu_count, tier (as written) and observed_on: a
    known key with a new price is updated, the same file twice changes nothing, and the
    daily run never removes imported rows.
    """
    from gpuprice.disk import check_free_space
    from gpuprice.scrapers.observations import ObservationsFileError, load_observations
    from gpuprice.settings import Settings
    from gpuprice.warehouse.connection import WarehouseBusy, writer
    from gpuprice.warehouse.history_writes import merge_public_reports
    from gpuprice.warehouse.publish import publish_analytics_copy

    if not file.is_file():
        raise BadInput(f"no such file {str(file)!r}")
    try:
        frame, quarantined = load_observations(file)
    except ObservationsFileError as exc:  # unreadable: nothing is imported
        raise BadInput(str(exc)) from None
    if frame.empty:
        first = quarantined[0][2] if quarantined else "the file has no data rows"
        raise BadInput(f"{file}: no observation could be imported ({first})")
    settings = Settings.from_env()
    check_free_space(settings.ensure_home())  # a read-only or full home: one line, nothing written
    try:
        with writer(settings.warehouse_path) as con:
            counts = merge_public_reports(
                con, frame, quarantined, source_file=str(file.resolve()), replace=replace
            )
            publish_analytics_copy(con, settings.warehouse_path, settings.analytics_path)
    except WarehouseBusy as exc:
        raise BadInput(str(exc)) from None
    if replace:
        typer.echo(f"removed {counts.removed} previously imported rows (--replace)", err=True)
    typer.echo(
        f"imported {file.name}: {counts.added} added, {counts.updated} updated, "
        f"{counts.unchanged} unchanged, {counts.quarantined} quarantined"
    )
    for provider, _, reason in quarantined[:10]:
        typer.echo(f"  quarantined ({provider}): {reason}", err=True)
