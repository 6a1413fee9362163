"""gpuprice sql: read-only queries against the published analytics copy."""

from __future__ import annotations

from typing import Annotated

import typer

from gpuprice.commands import metavars
from gpuprice.errors import BadInput

FORMATS = ("table", "csv", "json")


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
        from gpuprice.commands.output import jsonable, terminal_safe, write_csv, write_json
        from gpuprice.settings import Settings
        from gpuprice.warehouse.sqlguard import open_guarded, run_query

        if format not in FORMATS:
            raise BadInput(f"unknown format {format!r}; valid: {', '.join(FORMATS)}")
        settings = Settings.from_env()
        settings.checked_home()
        path = settings.analytics_path
        if not path.exists():
            raise BadInput(f"no published warehouse at {path}; run `gpuprice run` first")
        con = open_guarded(path, settings.exports_dir)
        try:
            result = run_query(con, query, timeout_s=settings.sql_timeout_s, row_cap=settings.sql_max_rows)
        finally:
            con.close()
        columns, rows = result.columns, result.rows
        if format == "json":
            write_json([dict(zip(columns, row)) for row in rows])
        elif format == "csv":
            write_csv(columns, rows)
        else:
            from rich.console import Console
            from rich.table import Table

            cells = [["" if v is None else terminal_safe(jsonable(v)) for v in row] for row in rows]
            headers = [terminal_safe(c) for c in columns]
            widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(headers)]
            table = Table(*headers, show_lines=False, highlight=False)
            for row in cells:
                table.add_row(*row)
            # Wide enough for every cell: analysts page or pipe the output rather than lose text.
            Console(width=sum(widths) + 3 * len(widths) + 1, highlight=False).print(table, markup=False)
