"""gpuprice history: each provider's in-force list price for one GPU per day, and the cheapest."""

from __future__ import annotations

import datetime as dt
import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpuprice.commands import metavars
from gpuprice.commands.csv_out import csv_writer
from gpuprice.commands.tables import WideFlag
from gpuprice.errors import BadInput, unknown_choice

if TYPE_CHECKING:
    import pandas as pd

    from gpuprice.settings import Settings
    from gpuprice.warehouse.price_series import SeriesDay

FORMATS = ("table", "csv", "json")
# The contract's fields first; the rest are additions. Every form (table, CSV, JSON) has every day
# of the window: a day without a current price is one row with nulls (empty in CSV) and its reason.
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
    "providers_change",
    "reason",
)
# Points that did not come from gpuprice's own scrape are marked in the table.
SOURCE_MARKS = {"catalog_history": "*", "public_report": "+"}
SOURCE_NOTES = {"catalog_history": "catalog history (import-history)", "public_report": "cited public report"}
DEFAULT_WINDOW_DAYS = 365  # without --since: the year up to the newest snapshot


def _iso(value: Any) -> str:
    import pandas as pd

    return pd.Timestamp(value).date().isoformat()


def _provider_records(frame) -> list[dict[str, Any]]:
    """The warehouse's rows: one per provider and day with a current price."""
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
                "source": row.source,
            }
        )
    return records


def _day_records(days: list[SeriesDay], tier: str) -> list[dict[str, Any]]:
    """JSON/CSV rows, the table's days: each provider's price (``cheapest`` marks the day's
    cheapest, the one the table names), or one row of nulls with the reason on a day without any."""
    from gpuprice.warehouse.price_series import NO_CURRENT_PRICE

    records: list[dict[str, Any]] = []
    for day in days:
        date = day.date.isoformat()
        for point in day.rows:
            records.append(
                {
                    **point,
                    "cheapest": day.cheapest is not None and point["provider"] == day.cheapest.provider,
                    "providers_change": day.providers_change,
                    "reason": None,
                }
            )
        if not day.rows:
            records.append(
                {
                    **dict.fromkeys(JSON_FIELDS),
                    "date": date,
                    "tier": tier,
                    "cheapest": False,
                    "providers_change": day.providers_change,
                    "reason": NO_CURRENT_PRICE,
                }
            )
    return records


def _print_table(
    days: list[SeriesDay],
    gpu: str,
    tier: str,
    max_age: int,
    *,
    wide: bool = False,
) -> None:
    """One line per day of the window: the cheapest current price, each provider's price with the
    age of its page, and a note when the providers behind the day's prices changed (or none is current)."""
    from gpuprice.commands.tables import Column, number, print_table
    from gpuprice.warehouse.price_series import NO_CURRENT_PRICE

    providers = sorted({p for day in days for p in day.prices})
    # The date, the cheapest and the change note always; providers in name order as the width allows.
    columns = [Column("date", 0), Column("cheapest", 0), Column("providers", 0, wrap=True)]
    columns += [Column(p, 1 + i, numeric=True) for i, p in enumerate(providers)]
    rows = []
    for day in days:
        cells = [
            f"{number(day.prices[p].usd_per_gpu_hour, 2)} ({day.prices[p].age_days}d)"
            + SOURCE_MARKS.get(day.prices[p].source or "", "")
            if p in day.prices
            else "-"
            for p in providers
        ]
        best = day.cheapest
        cheapest = f"{best.provider} {number(best.usd_per_gpu_hour, 2)}" if best else NO_CURRENT_PRICE
        rows.append([day.date.isoformat(), cheapest, day.providers_change, *cells])
    print_table(
        columns,
        rows,
        title=f"{gpu} {tier} list price per GPU-hour (USD; age of the page in days)",
        wide=wide,
    )
    print(f"current: pages at most {max_age} days old; the cheapest is among them")
    print("providers: +joined -left the day's current prices")
    used = sorted({p.source for day in days for p in day.prices.values() if p.source in SOURCE_MARKS})
    for source in used:
        print(f"{SOURCE_MARKS[source]} {SOURCE_NOTES[source]} (source = {source})")


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
        str | None,
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
    from gpuprice.commands.validation import parse_date, parse_max_age
    from gpuprice.models.catalog import gpu_slugs
    from gpuprice.scrapers.offer import TIERS
    from gpuprice.settings import Settings
    from gpuprice.warehouse.price_series import series_days
    from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS

    if format not in FORMATS:
        raise BadInput(f"unknown format {format!r}; valid: {', '.join(FORMATS)}")
    if gpu not in gpu_slugs():
        raise unknown_choice("GPU", gpu, gpu_slugs())
    if tier not in TIERS:
        raise BadInput(f"unknown tier {tier!r}; valid: {', '.join(TIERS)}")
    max_age = parse_max_age("--max-age-days", max_age_days, MAX_PRICE_AGE_DAYS)
    start = parse_date(since, "--since") if since is not None else None
    end = parse_date(until, "--until") if until is not None else None
    window = _window(Settings.from_env(), gpu, tier, start, end, max_age)
    points = _provider_records(window.frame)
    days = series_days(points, window.start, window.end) if points else []
    records = _day_records(days, tier)
    if window.said_end and records:  # the default end, stated (an empty window says it in its one line)
        print(f"history of {gpu} {tier} up to the newest snapshot date {window.end}", file=sys.stderr)
    if format == "json":
        json.dump(records, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif format == "csv":
        writer = csv_writer()
        writer.writerow(JSON_FIELDS)
        for record in records:
            writer.writerow([record[c] for c in JSON_FIELDS])
    elif records:
        _print_table(days, gpu, tier, max_age, wide=wide)
    if not records:
        print(_nothing_current(window, gpu, tier, max_age), file=sys.stderr)


@dataclass(frozen=True)
class _Window:
    """The dates of the series, its rows, and (when it has none) each provider's newest page."""

    start: dt.date
    end: dt.date
    said_end: bool  # the end is the newest snapshot date, not --until
    frame: pd.DataFrame
    pages: list[tuple[str, dt.date, int]]  # (provider, page date, age in days)


def _window(
    settings: Settings, gpu: str, tier: str, start: dt.date | None, end: dt.date | None, max_age: int
) -> _Window:
    from gpuprice.warehouse import queries
    from gpuprice.warehouse.price_series import newest_pages

    settings.checked_home()
    con = queries.open_analytics(settings.analytics_path)
    try:
        newest = queries.newest_snapshot_date(con)
        if newest is None:
            raise BadInput("the warehouse holds no price snapshots yet; run `gpuprice run` first")
        said_end = end is None
        if end is None:
            end = newest
        if start is None:
            start = end - dt.timedelta(days=DEFAULT_WINDOW_DAYS)
        if start > end:
            raise BadInput(f"--since {start} is after the end of the series {end}")
        frame = queries.price_history_series(con, gpu, tier, start, end, max_age)
        pages = newest_pages(con, gpu, tier, end) if frame.empty else []
    finally:
        con.close()
    return _Window(start, end, said_end, frame, pages)


def _nothing_current(window: _Window, gpu: str, tier: str, max_age: int) -> str:
    """The one line for a window without a current price: which providers' pages were too old."""
    old = ", ".join(f"{p} {age} days (page of {seen})" for p, seen, age in window.pages)
    return (
        f"no current {tier} list price for {gpu} from {window.start} to {window.end}"
        + (" (the newest snapshot date)" if window.said_end else "")
        + ": "
        + (
            f"every provider's newest page was older than {max_age} days on {window.end}: {old}; "
            "--max-age-days N widens the limit"
            if window.pages
            else "no provider lists it"
        )
    )
