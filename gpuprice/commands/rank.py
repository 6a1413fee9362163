"""gpuprice rank: the offers of a date that fit a workload, cheapest per successful checkpoint first."""

from __future__ import annotations

import datetime as dt
import json
import math
import sys
from typing import Annotated, Any

import pandas as pd
import typer

from gpuprice.commands import metavars
from gpuprice.commands.csv_out import csv_writer
from gpuprice.errors import BadInput

FORMATS = ("table", "json", "csv")
# Contract fields first, then the rest of the ranking row.
JSON_FIELDS = (
    "rank",
    "provider",
    "gpu",
    "gpu_count",
    "tier",
    "community",
    "usd_per_gpu_hour",
    "per_gpu_gb",
    "hours",
    "run_cost_usd",
    "cost_per_checkpoint_usd",
    "warnings",
    "sku",
    "nodes",
    "commitment_months",
    "price_basis",
    "sharding",
    "tokens_per_sec_per_gpu",
    "mfu",
    "price_snapshot_date",
    "workload",
    "snapshot_date",
    "cost_terms",
)
_ROUND = {
    "per_gpu_gb": 3,
    "hours": 4,
    "run_cost_usd": 2,
    "cost_per_checkpoint_usd": 4,
    "tokens_per_sec_per_gpu": 2,
    "mfu": 4,
    "usd_per_gpu_hour": 4,
}


def _value(name: str, value: Any) -> Any:
    """A ranking cell as plain JSON (dates as ISO text, NA as null, cost_terms parsed)."""
    if name == "cost_terms":
        return json.loads(value) if isinstance(value, str) else value
    if name == "warnings":
        return list(value)
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if name in _ROUND and isinstance(value, float):
        return round(value, _ROUND[name])
    return value


def ranking_records(ranked: pd.DataFrame) -> list[dict[str, Any]]:
    """The ``rank --format json`` objects."""
    return [
        {name: _value(name, row[name]) for name in JSON_FIELDS} for row in ranked.to_dict(orient="records")
    ]


def _top(text: str | None) -> int | None:
    """--top as a positive whole number (parsed here so a bad value is named)."""
    if text is None:
        return None
    try:
        value = int(text.strip())
    except ValueError:
        raise BadInput(f"--top {text!r} is not a whole number") from None
    if value < 1:
        raise BadInput(f"--top {value} must be at least 1")
    return value


def _hours(value: float) -> str:
    return f"{value:,.1f}" if value >= 10 else f"{value:.2g}"


def _print_table(records: list[dict[str, Any]], workload: str, day: dt.date) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=200)
    table = Table(
        title=f"{workload} on {day.isoformat()}: cost per successful checkpoint", header_style="bold"
    )
    for column in (
        "#",
        "provider",
        "gpu",
        "GPUs",
        "tier",
        "$/GPU-h",
        "sharding",
        "GB/GPU",
        "tok/s/GPU",
        "MFU",
        "hours",
        "run $",
        "$/checkpoint",
        "warnings",
    ):
        table.add_column(
            column,
            justify="left" if column in ("provider", "gpu", "tier", "sharding", "warnings") else "right",
        )
    for r in records:
        tier = (
            r["tier"]
            + (" (community)" if r["community"] else "")
            + (f" {r['commitment_months']} mo" if r["commitment_months"] else "")
        )
        table.add_row(
            str(r["rank"]),
            r["provider"],
            r["gpu"],
            f"{r['gpu_count']}" + (f" ({r['nodes']} nodes)" if r["nodes"] > 1 else ""),
            tier,
            f"{r['usd_per_gpu_hour']:.2f}",
            r["sharding"],
            f"{r['per_gpu_gb']:.1f}",
            f"{r['tokens_per_sec_per_gpu']:,.0f}",
            f"{r['mfu']:.0%}",
            _hours(r["hours"]),
            f"{r['run_cost_usd']:,.2f}",
            f"{r['cost_per_checkpoint_usd']:,.2f}",
            "; ".join(w.split(":", 1)[0] for w in r["warnings"]),
        )
    console.print(table)


def _write_csv(records: list[dict[str, Any]]) -> None:
    writer = csv_writer()
    columns = [c for c in JSON_FIELDS if c != "cost_terms"]
    writer.writerow(columns)
    for record in records:
        writer.writerow(["; ".join(record[c]) if c == "warnings" else record[c] for c in columns])


def register(app: typer.Typer) -> None:
    @app.command("rank")
    def rank(
        workload: Annotated[
            str, typer.Option("--workload", help="Workload name (see `gpuprice workloads`).", metavar="NAME")
        ],
        date: Annotated[
            str | None,
            typer.Option("--date", help="Offers as of that date [today, UTC].", metavar=metavars.DATE),
        ] = None,
        top: Annotated[
            str | None, typer.Option("--top", help="Show the N cheapest.", metavar=metavars.INTEGER)
        ] = None,
        format: Annotated[
            str, typer.Option("--format", help="Output format [table].", metavar=metavars.choice(FORMATS))
        ] = "table",
    ) -> None:
        """Rank the offers that fit a workload by cost per successful checkpoint."""
        from gpuprice.commands.validation import parse_date
        from gpuprice.models.ranking import rank_offers
        from gpuprice.models.workloads import get_workload, load_workloads
        from gpuprice.settings import Settings

        if format not in FORMATS:
            raise BadInput(f"unknown format {format!r}; valid: {', '.join(FORMATS)}")
        count = _top(top)
        settings = Settings.from_env()
        chosen = get_workload(workload, load_workloads(settings.workloads))
        day = parse_date(date, "--date") if date is not None else dt.datetime.now(dt.UTC).date()

        from gpuprice.warehouse import queries

        settings.checked_home()
        con = queries.open_analytics(settings.analytics_path)
        try:
            offers = queries.offers_as_of(con, day)
            stale = queries.stale_providers(con, day)
        finally:
            con.close()
        ranked = rank_offers(offers, [chosen], day, stale_providers=stale)
        if count is not None:
            ranked = ranked.head(count)
        records = ranking_records(ranked)
        if format == "json":
            json.dump(records, sys.stdout, indent=1)
            sys.stdout.write("\n")
        elif format == "csv":
            _write_csv(records)
        elif records:
            _print_table(records, chosen.name, day)
        else:
            print(f"no offer on or before {day.isoformat()} fits {chosen.name}", file=sys.stderr)
