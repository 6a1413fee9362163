"""gpuprice history: each provider's in-force list price for one GPU per day, and the cheapest."""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Annotated, Any

import typer

from gpuprice.commands import metavars
from gpuprice.commands.csv_out import csv_writer
from gpuprice.commands.tables import WideFlag
from gpuprice.errors import BadInput, unknown_choice

FORMATS = ("table", "csv", "json")
# The contract's fields first; community and cheapest are additions.
JSON_FIELDS = (
    "date",
    "provider",
    "gpu_count",
    "tier",
    "usd_per_gpu_hour",
    "observed_on",
    "age_days",
    "community",
    "cheapest",
    "source",
)
# Points that did not come from gpuprice's own scrape are marked in the table.
SOURCE_MARKS = {"catalog_history": "*", "public_report": "+"}
SOURCE_NOTES = {"catalog_history": "catalog history (import-history)", "public_report": "cited public report"}
DEFAULT_WINDOW_DAYS = 365  # without --since: the year up to the newest snapshot


def _iso(value: Any) -> str:
    import pandas as pd

    return pd.Timestamp(value).date().isoformat()


def _records(frame) -> list[dict[str, Any]]:
    records = []
    for row in frame.itertuples(index=False):
        records.append(
            {
                "date": _iso(row.date),
                "provider": row.provider,
                "gpu_count": int(row.gpu_count),
                "tier": row.tier,
                "usd_per_gpu_hour": round(float(row.usd_per_gpu_hour), 4),
                "observed_on": _iso(row.observed_on),
                "age_days": int(row.age_days),
                "community": bool(row.community),
                "cheapest": bool(row.cheapest),
                "source": row.source,
            }
        )
    return records


def _print_table(records: list[dict[str, Any]], gpu: str, tier: str, *, wide: bool = False) -> None:
    """One line per date on which any provider's price (or the cheapest) changed."""
    from gpuprice.commands.tables import Column, number, print_table

    providers = sorted({r["provider"] for r in records})
    by_date: dict[str, dict[str, dict[str, Any]]] = {}
    for r in records:
        by_date.setdefault(r["date"], {})[r["provider"]] = r
    # The date and the cheapest always; providers in name order as the width allows.
    columns = [Column("date", 0), Column("cheapest", 0)]
    columns += [Column(p, 1 + i, numeric=True) for i, p in enumerate(providers)]
    rows = []
    previous: tuple | None = None
    for date, day_rows in by_date.items():
        state = tuple(
            (p, day_rows[p]["usd_per_gpu_hour"], day_rows[p]["source"]) if p in day_rows else (p, None, None)
            for p in providers
        )
        if state == previous:
            continue  # the same prices as the line above (only their age grew)
        previous = state
        cells = [
            f"{number(day_rows[p]['usd_per_gpu_hour'], 2)} ({day_rows[p]['age_days']}d)"
            + SOURCE_MARKS.get(day_rows[p]["source"], "")
            if p in day_rows
            else "-"
            for p in providers
        ]
        best = next(r for r in day_rows.values() if r["cheapest"])
        rows.append([date, f"{best['provider']} {number(best['usd_per_gpu_hour'], 2)}", *cells])
    print_table(
        columns,
        rows,
        title=f"{gpu} {tier} list price per GPU-hour (USD; age of the page in days)",
        wide=wide,
    )
    used = sorted({r["source"] for r in records if r["source"] in SOURCE_MARKS})
    for source in used:
        print(f"{SOURCE_MARKS[source]} {SOURCE_NOTES[source]} (source = {source})")


def register(app: typer.Typer) -> None:
    @app.command("history")
    def history(
        gpu: Annotated[str, typer.Option("--gpu", help="GPU slug, e.g. h100-sxm.", metavar=metavars.TEXT)],
        tier: Annotated[
            str,
            typer.Option(
                "--tier",
                help="Price tier [on_demand].",
                metavar=metavars.choice(("on_demand", "spot", "reserved")),
            ),
        ] = "on_demand",
        since: Annotated[
            str | None,
            typer.Option(
                "--since",
                help=f"First date [{DEFAULT_WINDOW_DAYS} days before the end].",
                metavar=metavars.DATE,
            ),
        ] = None,
        until: Annotated[
            str | None,
            typer.Option("--until", help="Last date [the newest snapshot date].", metavar=metavars.DATE),
        ] = None,
        max_age_days: Annotated[
            int | None,
            typer.Option(
                "--max-age-days",
                help="Oldest page age a carried-forward price may have [14].",
                metavar=metavars.INTEGER,
            ),
        ] = None,
        format: Annotated[
            str, typer.Option("--format", help="Output format [table].", metavar=metavars.choice(FORMATS))
        ] = "table",
        wide: WideFlag = False,
    ) -> None:
        """How a GPU's price changed: per provider per day (last observation carried forward) and the cheapest."""
        from gpuprice.commands.validation import parse_date
        from gpuprice.models.catalog import gpu_slugs
        from gpuprice.scrapers.offer import TIERS
        from gpuprice.settings import Settings
        from gpuprice.warehouse import queries
        from gpuprice.warehouse.staleness import MAX_OFFER_AGE_DAYS

        if format not in FORMATS:
            raise BadInput(f"unknown format {format!r}; valid: {', '.join(FORMATS)}")
        if gpu not in gpu_slugs():
            raise unknown_choice("GPU", gpu, gpu_slugs())
        if tier not in TIERS:
            raise BadInput(f"unknown tier {tier!r}; valid: {', '.join(TIERS)}")
        max_age = MAX_OFFER_AGE_DAYS if max_age_days is None else max_age_days
        if not 0 <= max_age <= 3650:
            raise BadInput(f"--max-age-days {max_age} outside 0..3650")
        start = parse_date(since, "--since") if since is not None else None
        end = parse_date(until, "--until") if until is not None else None
        settings = Settings.from_env()
        settings.checked_home()
        con = queries.open_analytics(settings.analytics_path)
        try:
            newest = queries.newest_snapshot_date(con)
            if newest is None:
                raise BadInput("the warehouse holds no price snapshots yet; run `gpuprice run` first")
            if end is None:
                end = newest
                print(f"history of {gpu} {tier} up to the newest snapshot date {newest}", file=sys.stderr)
            if start is None:
                start = end - dt.timedelta(days=DEFAULT_WINDOW_DAYS)
            if start > end:
                raise BadInput(f"--since {start} is after the end of the series {end}")
            frame = queries.price_history_series(con, gpu, tier, start, end, max_age)
        finally:
            con.close()
        records = _records(frame)
        if format == "json":
            json.dump(records, sys.stdout, indent=1)
            sys.stdout.write("\n")
        elif format == "csv":
            writer = csv_writer()
            writer.writerow(JSON_FIELDS)
            for record in records:
                writer.writerow([record[c] for c in JSON_FIELDS])
        elif records:
            _print_table(records, gpu, tier, wide=wide)
        if not records:
            print(
                f"no {tier} list price for {gpu} observed within {max_age} days between {start} and {end}",
                file=sys.stderr,
            )
