"""gpuprice import-observations FILE.csv: cited public prices as history (source = public_report)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuprice.errors import BadInput


def register(app: typer.Typer) -> None:
    @app.command("import-observations")
    def import_observations(
        file: Annotated[
            Path, typer.Argument(help="CSV in the observed_prices.csv format.", metavar="FILE.csv")
        ],
    ) -> None:
        """Load cited price observations into the warehouse as public_report history."""
        from gpuprice.scrapers.observations import ObservationsFileError, load_observations
        from gpuprice.settings import Settings
        from gpuprice.warehouse.connection import WarehouseBusy, writer
        from gpuprice.warehouse.publish import publish_analytics_copy
        from gpuprice.warehouse.writes import replace_public_reports

        if not file.is_file():
            raise BadInput(f"no such file {str(file)!r}")
        try:
            frame, quarantined = load_observations(file)
        except ObservationsFileError as exc:
            raise BadInput(str(exc)) from None
        if frame.empty:
            first = quarantined[0][2] if quarantined else "the file has no data rows"
            raise BadInput(f"{file}: no observation could be imported ({first})")
        settings = Settings.from_env()
        settings.checked_home()
        try:
            with writer(settings.warehouse_path) as con:
                count = replace_public_reports(con, frame, quarantined)
                publish_analytics_copy(con, settings.warehouse_path, settings.analytics_path)
        except WarehouseBusy as exc:
            raise BadInput(str(exc)) from None
        typer.echo(f"imported {count} observations as public_report rows; {len(quarantined)} quarantined")
        for provider, _, reason in quarantined[:10]:
            typer.echo(f"  quarantined ({provider}): {reason}", err=True)
