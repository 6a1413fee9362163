"""gpuprice rank: the offers of a date that fit a workload or an ad-hoc job, cheapest per successful
checkpoint first, each with the run's total cost.

The job's options are in rank_job.py, the output formats in rank_output.py, the reason for an
empty answer in rank_empty.py.
"""

from __future__ import annotations

import datetime as dt
import sys
from typing import TYPE_CHECKING, Annotated, Any

import pandas as pd
import typer

from gpuprice.commands import metavars
from gpuprice.commands.model_options import with_model_options
from gpuprice.commands.rank_job import RANK_DECIDES, choose_workload, parse_price_bases, with_job_options
from gpuprice.commands.rank_output import FORMATS, ranking_records, write_ranking
from gpuprice.commands.tables import WideFlag
from gpuprice.errors import BadInput
from gpuprice.quantities import tokens_text

if TYPE_CHECKING:
    from gpuprice.settings import Settings


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


def _offers_as_of(
    settings: Settings, day: dt.date | None, bases: tuple[str, ...]
) -> tuple[dt.date, pd.DataFrame, set[str]]:
    """(the date, the offers in force on it, the stale providers); no date: the newest snapshot's."""
    from gpuprice.warehouse import queries

    settings.checked_home()
    con = queries.open_analytics(settings.analytics_path)
    try:
        if day is None:  # one notion of now: the newest snapshot date, said on stderr
            day = queries.newest_snapshot_date(con) or dt.datetime.now(dt.UTC).date()
            print(f"ranking offers as of the newest snapshot date {day.isoformat()}", file=sys.stderr)
        return day, queries.offers_as_of(con, day, bases), queries.stale_providers(con, day)
    finally:
        con.close()


def _shown(everything: pd.DataFrame, *, include_infeasible: bool, include_stale: bool) -> pd.DataFrame:
    """The rows asked for, renumbered: beyond a limit only with --include-infeasible, not current
    only with --include-stale."""
    from gpuprice.models.ranking import LIMITS, PRICE_AGE

    codes = everything["excluded_by"].map(set)
    shown = codes.map(
        lambda c: (include_infeasible or not c & set(LIMITS)) and (include_stale or PRICE_AGE not in c)
    )
    ranked = everything[shown.astype(bool)].copy()
    ranked["rank"] = range(1, len(ranked) + 1)
    return ranked


# The rank command's own options (the model and JOB options are declared by the decorators).
WorkloadOpt = Annotated[
    str | None,
    typer.Option(
        "--workload", help="Workload name (see `gpuprice workloads`), or give a JOB.", metavar="NAME"
    ),
]
DateOpt = Annotated[
    str | None,
    typer.Option("--date", help="Offers as of that date [the newest snapshot date].", metavar=metavars.DATE),
]
TopOpt = Annotated[str | None, typer.Option("--top", help="Show the N cheapest.", metavar=metavars.INTEGER)]
FormatOpt = Annotated[
    str, typer.Option("--format", help="Output format [table].", metavar=metavars.choice(FORMATS))
]
IncludeInfeasibleOpt = Annotated[
    bool,
    typer.Option("--include-infeasible", help="Also show offers beyond a limit, marked (excluded_by)."),
]
PriceBasisOpt = Annotated[
    str,
    typer.Option(
        "--price-basis",
        help="Comma-separated price kinds to rank: list, from (floors), lowest_now, bid_floor, contract [list].",
        metavar="BASIS[,BASIS]",
    ),
]
MaxPriceAgeOpt = Annotated[
    str | None,
    typer.Option(
        "--max-price-age-days",
        help="Prices whose page is older than N days are not current: left out [14].",
        metavar=metavars.INTEGER,
    ),
]
IncludeStaleOpt = Annotated[
    bool,
    typer.Option(
        "--include-stale",
        help="Also show offers whose price is older than the limit, last, with a stale-price warning.",
    ),
]


@with_model_options(exclude=RANK_DECIDES)
@with_job_options
def rank(
    options: dict[str, Any],
    job: dict[str, Any],
    workload: WorkloadOpt = None,
    date: DateOpt = None,
    top: TopOpt = None,
    format: FormatOpt = "table",
    include_infeasible: IncludeInfeasibleOpt = False,
    price_basis: PriceBasisOpt = "list",
    max_price_age_days: MaxPriceAgeOpt = None,
    include_stale: IncludeStaleOpt = False,
    wide: WideFlag = False,
) -> None:
    """Rank the offers that fit a workload or an ad-hoc JOB by cost per successful checkpoint."""
    from gpuprice.commands.rank_empty import empty_reason
    from gpuprice.commands.validation import parse_date, parse_max_age
    from gpuprice.models.ranking import rank_offers
    from gpuprice.settings import Settings
    from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS

    if format not in FORMATS:
        raise BadInput(f"unknown format {format!r}; valid: {', '.join(FORMATS)}")
    count = _top(top)
    settings = Settings.from_env()
    chosen = choose_workload(workload, options, job, settings.workloads)
    bases = parse_price_bases(price_basis)
    max_age = parse_max_age("--max-price-age-days", max_price_age_days, MAX_PRICE_AGE_DAYS)
    day, offers, stale = _offers_as_of(
        settings, parse_date(date, "--date") if date is not None else None, bases
    )
    everything = rank_offers(
        offers,
        [chosen],
        day,
        stale_providers=stale,
        include_infeasible=True,
        include_stale=True,
        max_price_age_days=max_age,
    )
    ranked = _shown(everything, include_infeasible=include_infeasible, include_stale=include_stale)
    records = ranking_records(ranked.head(count) if count is not None else ranked)
    if not records:
        print(empty_reason(chosen, offers, everything, day, max_age), file=sys.stderr)
    title = (
        f"{chosen.name} ({tokens_text(chosen.training_tokens)} tokens) on {day.isoformat()}: "
        "total cost and cost per successful checkpoint"
    )
    write_ranking(records, format, title, wide=wide)
