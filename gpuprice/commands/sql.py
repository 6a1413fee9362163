"""gpuprice sql: read-only queries against the published analytics copy."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import sys
from typing import Annotated

import typer

from gpuprice.commands import metavars
from gpuprice.commands.csv_out import csv_writer
from gpuprice.errors import BadInput

FORMATS = ("table", "csv", "json")


def _jsonable(value):
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.days if value.seconds == 0 else value.total_seconds()
    return value


def register(app: typer.Typer) -> None:
    @app.command("sql")
    def sql(
        query: Annotated[
            str, typer.Argument(help="SQL (SELECT or EXPLAIN) against the analytics copy.", metavar="QUERY")
        ],
        format: Annotated[
            str, typer.Option("--format", help="Output format [table].", metavar=metavars.choice(FORMATS))
        ] = "table",
    ) -> None:
        """Run a read-only query against the published analytics copy ($GPUPRICE_HOME/analytics.duckdb)."""
        from gpuprice.settings import Settings
        from gpuprice.warehouse.sqlguard import open_guarded, run_query

        if format not in FORMATS:
            raise BadInput(f"unknown format {format!r}; valid: {', '.join(FORMATS)}")
        settings = Settings.from_env()
        home = settings.checked_home()
        path = settings.analytics_path
        if not path.exists():
            raise BadInput(f"no published warehouse at {path}; run `gpuprice run` first")
        con = open_guarded(path, home)
        try:
            rel = run_query(con, query)
            if rel is None:
                return
            columns = list(rel.columns)
            try:
                rows = rel.fetchall()
            except Exception as exc:  # errors raised while executing (permission, conversion)
                raise BadInput(f"query failed: {str(exc).strip().splitlines()[0]}") from None
        finally:
            con.close()
        if format == "json":
            json.dump([{c: _jsonable(v) for c, v in zip(columns, row)} for row in rows], sys.stdout, indent=1)
            sys.stdout.write("\n")
        elif format == "csv":
            writer = csv_writer()
            writer.writerow(columns)
            writer.writerows([[_jsonable(v) for v in row] for row in rows])
        else:
            from rich.console import Console
            from rich.table import Table

            cells = [["" if v is None else str(_jsonable(v)) for v in row] for row in rows]
            widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
            table = Table(*columns, show_lines=False, highlight=False)
            for row in cells:
                table.add_row(*row)
            # Wide enough for every cell: analysts page or pipe the output rather than lose text.
            Console(width=sum(widths) + 3 * len(widths) + 1, highlight=False).print(table, markup=False)
