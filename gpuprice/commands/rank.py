"""gpuprice rank: the offers of a date that fit a workload or an ad-hoc job, cheapest per successful
checkpoint first, each with the run's total cost."""

from __future__ import annotations

import datetime as dt
import functools
import inspect
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer

from gpuprice.commands import metavars
from gpuprice.commands.model_options import with_model_options
from gpuprice.commands.output import write_csv, write_json
from gpuprice.commands.tables import Column, WideFlag, number, print_table
from gpuprice.commands.validation import parse_choices, parse_providers
from gpuprice.errors import BadInput
from gpuprice.models.workloads import JOB_FIELDS, LIMIT_FIELDS, Workload
from gpuprice.quantities import parse_number, tokens_text

# rank chooses the GPU count and sharding per offer itself.
RANK_DECIDES = ("gpus", "sharding")

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
    "total_cost_usd",
    "cost_per_checkpoint_usd",
    "price_basis",
    "observed_on",
    "price_age_days",
    "warnings",
    "verdict",
    "excluded_by",
    "headroom_gb",
    "sku",
    "nodes",
    "commitment_months",
    "sharding",
    "tokens_per_sec_per_gpu",
    "mfu",
    "price_snapshot_date",
    "workload",
    "snapshot_date",
    "cost_terms",
    "region",
    "preemption_rate_per_node_hour",
    "preemption_rate_source",
)
# Every cost term (models.cost / models.ranking cost_terms) as its own CSV column.
TERM_COLUMNS = (
    "gpu_usd",
    "orchestration_usd",
    "rework_usd",
    "storage_usd",
    "data_usd",
    "engineer_usd",
    "reusable_value_usd",
    "total_usd",
    "checkpoints",
    "compute_hours",
    "orchestration_hours",
    "rework_hours",
    "wall_hours",
    "expected_interruptions",
    "checkpoint_gb",
    "dataset_gb",
    "model_download_gb",
)
_ROUND = {
    "per_gpu_gb": 3,
    "headroom_gb": 3,
    "hours": 4,
    "run_cost_usd": 2,
    "total_cost_usd": 2,
    "cost_per_checkpoint_usd": 4,
    "tokens_per_sec_per_gpu": 2,
    "mfu": 4,
    "usd_per_gpu_hour": 4,
}


def _value(name: str, value: Any) -> Any:
    """A ranking cell as plain JSON (dates as ISO text, NA as null, cost_terms parsed)."""
    if name == "cost_terms":
        return json.loads(value) if isinstance(value, str) else value
    if name in ("warnings", "excluded_by"):
        return list(value) if value is not None else []
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
    records = [
        {name: _value(name, row[name]) for name in JSON_FIELDS} for row in ranked.to_dict(orient="records")
    ]
    for record, row in zip(records, ranked.to_dict(orient="records"), strict=True):
        # the contract's observed_on: the date of the page the price was read from
        record.setdefault("observed_on", record.get("price_snapshot_date"))
        if "band_low_gb" in row:  # the out-of-sample error band around per_gpu_gb
            record["band_gb"] = {"low": round(row["band_low_gb"], 3), "high": round(row["band_high_gb"], 3)}
    return records


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


def _whole(option: str, text: str | None) -> int | None:
    if text is None:
        return None
    value = parse_number(option, text)
    assert value is not None
    if value != int(value) or value < 1:
        raise BadInput(f"{option} {text!r} must be a whole number of at least 1")
    return int(value)


def _positive(option: str, text: str | None, *, suffixes: bool = False) -> float | None:
    value = parse_number(option, text, suffixes=suffixes)
    if value is not None and value <= 0:
        raise BadInput(f"{option} {text!r} must be a positive number")
    return value


def _hours(value: float) -> str:
    return f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def _money(value: float) -> str:
    return number(value, 2)


# (column, priority): 0 always shown; the rest give way, highest number first, on a narrow terminal.
TABLE_COLUMNS = (
    Column("#", 0, numeric=True),
    Column("provider", 0),
    Column("GPUs", 0, wrap=True),
    Column("tier", 0, wrap=True),
    Column("$/GPU-h", 1, numeric=True),
    Column("total $", 0, numeric=True),
    Column("$/checkpoint", 0, numeric=True),
    Column("GPU time $", 4, numeric=True),
    Column("start-up $", 5, numeric=True),
    Column("rework $", 5, numeric=True),
    Column("other $", 6, numeric=True),
    Column("wall h", 3, numeric=True),
    Column("sharding", 4),
    Column("GB/GPU", 4, numeric=True),
    Column("tok/s/GPU", 4, numeric=True),
    Column("warnings", 0, wrap=True),
)


def tier_label(record: dict[str, Any]) -> str:
    """The tier as readers say it: ``on_demand (community)``, ``reserved 12 mo``, ``spot, from``."""
    return (
        record["tier"]
        + (" (community)" if record["community"] else "")
        + (f" {record['commitment_months']} mo" if record["commitment_months"] else "")
        + (f" ({record['price_basis']} price)" if record.get("price_basis") not in (None, "list") else "")
    )


def _print_table(records: list[dict[str, Any]], title: str, *, wide: bool = False) -> None:
    rows = []
    for r in records:
        terms = r["cost_terms"] or {}
        other = sum(terms.get(k, 0.0) for k in ("storage_usd", "data_usd", "engineer_usd")) - terms.get(
            "reusable_value_usd", 0.0
        )
        codes = [w.split(":", 1)[0] for w in r["warnings"]]
        if r["excluded_by"]:
            codes.insert(0, "EXCLUDED(" + ",".join(r["excluded_by"]) + ")")
        rows.append(
            [
                str(r["rank"]),
                r["provider"],
                f"{r['gpu_count']}x {r['gpu']}" + (f" ({r['nodes']} nodes)" if r["nodes"] > 1 else ""),
                tier_label(r),
                number(r["usd_per_gpu_hour"], 2),
                _money(r["total_cost_usd"]),
                _money(r["cost_per_checkpoint_usd"]),
                _money(r["run_cost_usd"]),
                _money(terms.get("orchestration_usd", 0.0)),
                _money(terms.get("rework_usd", 0.0)),
                _money(other),
                _hours(terms.get("wall_hours", r["hours"])),
                r["sharding"],
                number(r["per_gpu_gb"], 1),
                number(r["tokens_per_sec_per_gpu"], 0),
                " ".join(codes),
            ]
        )
    print_table(TABLE_COLUMNS, rows, title=title, wide=wide)


def csv_columns() -> list[str]:
    return [c for c in JSON_FIELDS if c != "cost_terms"] + list(TERM_COLUMNS)


def _cell(record: dict[str, Any], column: str) -> Any:
    if column in TERM_COLUMNS:
        return (record["cost_terms"] or {}).get(column)
    value = record[column]
    return "; ".join(value) if column in ("warnings", "excluded_by") else value


def _write_csv(records: list[dict[str, Any]]) -> None:
    columns = csv_columns()
    write_csv(columns, ([_cell(record, c) for c in columns] for record in records))


def _plan(row: Any) -> str:
    return f"{row['provider']} {int(row['gpu_count'])}x {row['gpu']} {row['tier']}"


def _empty_reason(
    chosen: Workload, offers: pd.DataFrame, ranked: pd.DataFrame, day: dt.date, max_age: int
) -> str:
    """Why nothing is shown, and the nearest answer, for stderr."""
    from gpuprice.models.ranking import LIMITS, PRICE_AGE

    when = f"on or before {day.isoformat()}"
    if offers.empty:
        return f"no scraped snapshot {when}: run `gpuprice run --date {day.isoformat()}` (or backfill) first"
    if ranked.empty:
        picked = offers
        if chosen.tier is not None:
            picked = picked[picked["tier"].isin(chosen.tier)]
        if chosen.providers is not None:
            picked = picked[picked["provider"].isin(chosen.providers)]
        if picked.empty:
            asked = [f"tier {','.join(chosen.tier)}" for _ in [0] if chosen.tier is not None]
            asked += [f"providers {','.join(chosen.providers)}" for _ in [0] if chosen.providers is not None]
            return f"no offer {when} matches {' and '.join(asked)}"
        return (
            f"nothing fits {chosen.name}: no offer {when} holds it in memory within its GPU and node limits"
        )
    old = ranked["excluded_by"].map(lambda codes: PRICE_AGE in codes)
    current = ranked[~old]
    if current.empty:
        ages = ranked.groupby("provider")["price_age_days"].min().sort_values()
        listed = ", ".join(f"{p} {int(a)} days" for p, a in ages.items())
        return (
            f"no current price fits {chosen.name} on {day.isoformat()}: every fitting offer's page is older "
            f"than {max_age} days ({listed}); --include-stale shows them, ranked last"
        )
    lists: list[list[str]] = list(current["excluded_by"])
    counts = {c: sum(c in codes for codes in lists) for c in LIMITS}
    limits = {
        "deadline": f"miss the {chosen.deadline_hours:g} h deadline" if chosen.deadline_hours else "",
        "max_gpus": f"exceed {chosen.max_gpus} GPUs",
        "max_nodes": f"exceed {chosen.max_nodes} node(s)",
        "budget": f"exceed the ${chosen.budget_usd:,.2f} budget" if chosen.budget_usd else "",
    }
    parts = [f"{n} {limits[c]}" for c, n in counts.items() if n]
    wall = current["cost_terms"].map(
        lambda t: float((json.loads(t) if isinstance(t, str) else t)["wall_hours"])
    )

    def breaks(row: Any) -> str:
        said = {
            "budget": f"over the ${chosen.budget_usd or 0:,.2f} budget",
            "deadline": f"{wall[row.name]:,.1f} h, over the {chosen.deadline_hours or 0:g} h deadline",
            "max_gpus": f"{int(row['gpu_count'])} GPUs, over the limit of {chosen.max_gpus}",
            "max_nodes": f"{int(row['nodes'])} nodes, over the limit of {chosen.max_nodes}",
        }
        return ", ".join(said[c] for c in row["excluded_by"] if c in said)

    cheapest = current.loc[current["total_cost_usd"].astype(float).idxmin()]
    nearest = [
        f"cheapest plan: ${float(cheapest['total_cost_usd']):,.2f} ({_plan(cheapest)}), {breaks(cheapest)}"
    ]
    if counts["deadline"]:
        fastest = current.loc[wall.idxmin()]
        if fastest.name != cheapest.name:
            nearest.append(f"fastest plan: {_plan(fastest)}, {breaks(fastest)}")
    return (
        f"every offer that fits {chosen.name} is excluded by a constraint: {'; '.join(parts)}; "
        f"{'; '.join(nearest)} (--include-infeasible shows them, marked)"
    )


JOB_METAVARS = {
    "tokens": metavars.TOKENS,
    "checkpoint_interval_tokens": metavars.TOKENS,
    "checkpoint_interval_hours": metavars.FLOAT,
    "deadline_hours": metavars.FLOAT,
    "max_gpus": metavars.INTEGER,
    "max_nodes": metavars.INTEGER,
    "budget_usd": metavars.FLOAT,
    "tier": "on_demand,spot,reserved",
    "providers": "P1,P2",
}
JOB_HELP = {
    "tokens": "JOB: training tokens, e.g. 1e9, 500M, 2B (K/M/B/T).",
    "checkpoint_interval_tokens": "JOB: tokens between checkpoints [a tenth of --tokens].",
    "checkpoint_interval_hours": "JOB: checkpoint on the wall clock every H hours instead.",
    "deadline_hours": "Exclude offers whose expected wall time exceeds H hours.",
    "max_gpus": "Exclude configurations of more than N GPUs.",
    "max_nodes": "Most 8-GPU nodes the job may span (JOB default 1).",
    "budget_usd": "Exclude offers whose total run cost exceeds X USD.",
    "tier": "Only these tiers: on_demand,spot,reserved [all].",
    "providers": "Only these providers, comma-separated [all].",
}


def _parse_job_values(values: dict[str, str | None]) -> dict[str, Any]:
    from gpuprice.scrapers.offer import TIERS

    return {
        "tokens": _positive("--tokens", values["tokens"], suffixes=True),
        "checkpoint_interval_tokens": _positive(
            "--checkpoint-interval-tokens", values["checkpoint_interval_tokens"], suffixes=True
        ),
        "checkpoint_interval_hours": _positive(
            "--checkpoint-interval-hours", values["checkpoint_interval_hours"]
        ),
        "deadline_hours": _positive("--deadline-hours", values["deadline_hours"]),
        "max_gpus": _whole("--max-gpus", values["max_gpus"]),
        "max_nodes": _whole("--max-nodes", values["max_nodes"]),
        "budget_usd": _positive("--budget-usd", values["budget_usd"]),
        "tier": parse_choices("--tier", values["tier"], TIERS),
        "providers": parse_providers(values["providers"]) if values["providers"] is not None else None,
    }


def with_job_options(command: Callable[..., None]) -> Callable[..., None]:
    """Declare the JOB_FIELDS as text options (``job`` dict, parsed) after ``options``."""
    own = list(inspect.signature(command, eval_str=True).parameters.values())
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [own[0]] + [
        inspect.Parameter(
            name,
            keyword,
            default=None,
            annotation=Annotated[
                str | None,
                typer.Option("--" + name.replace("_", "-"), help=JOB_HELP[name], metavar=JOB_METAVARS[name]),
            ],
        )
        for name in JOB_FIELDS
    ]
    params += [p.replace(kind=keyword) for p in own[1:] if p.name != "job"]

    @functools.wraps(command)
    def declared(options: dict[str, Any], **values: Any) -> None:
        job = _parse_job_values({name: values.pop(name) for name in JOB_FIELDS})
        command(options, job=job, **values)

    declared.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    declared.__annotations__ = {p.name: p.annotation for p in params}
    return declared


def choose_workload(
    workload: str | None, options: dict[str, Any], job: dict[str, Any], extra: Path | str | None = None
) -> Workload:
    """The catalog workload (``extra``: the user's workloads file; its limits tightened by the job
    options) or the ad-hoc JOB."""
    from gpuprice.commands.model_options import setup_from_options
    from gpuprice.models.workloads import get_workload, job_workload, load_workloads, with_limits

    model_given = [f"--{k.replace('_', '-')}" for k, v in options.items() if v is not None]
    job_only = [f"--{k.replace('_', '-')}" for k, v in job.items() if v is not None and k not in LIMIT_FIELDS]
    if workload is not None:
        if model_given or job_only:
            raise BadInput(
                f"give either --workload NAME or a job ({', '.join(model_given + job_only)}), not both"
            )
        return with_limits(get_workload(workload, load_workloads(extra)), {k: job[k] for k in LIMIT_FIELDS})
    if all(options.get(k) is None for k in ("model", "config", "params_b")):
        raise BadInput(
            "give --workload NAME (see `gpuprice workloads`) or a job: --model ID | --config PATH | "
            "--params-b N with --method and --tokens"
        )
    setup_from_options(**options)  # the model options' one-line errors, as for fit
    return job_workload({**options, **job})


def parse_price_bases(value: str) -> tuple[str, ...]:
    """``list,from`` -> ("list", "from"); BadInput naming the valid kinds otherwise."""
    from gpuprice.scrapers.offer import PRICE_BASES

    chosen = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    bad = [b for b in chosen if b not in PRICE_BASES]
    if bad or not chosen:
        raise BadInput(f"unknown price basis {(bad or [value])[0]!r}; valid: {', '.join(PRICE_BASES)}")
    return chosen


@with_model_options(exclude=RANK_DECIDES)
@with_job_options
def rank(
    options: dict[str, Any],
    job: dict[str, Any],
    workload: Annotated[
        str | None,
        typer.Option(
            "--workload", help="Workload name (see `gpuprice workloads`), or give a JOB.", metavar="NAME"
        ),
    ] = None,
    date: Annotated[
        str | None,
        typer.Option(
            "--date", help="Offers as of that date [the newest snapshot date].", metavar=metavars.DATE
        ),
    ] = None,
    top: Annotated[
        str | None, typer.Option("--top", help="Show the N cheapest.", metavar=metavars.INTEGER)
    ] = None,
    format: Annotated[
        str, typer.Option("--format", help="Output format [table].", metavar=metavars.choice(FORMATS))
    ] = "table",
    include_infeasible: Annotated[
        bool,
        typer.Option("--include-infeasible", help="Also show offers beyond a limit, marked (excluded_by)."),
    ] = False,
    price_basis: Annotated[
        str,
        typer.Option(
            "--price-basis",
            help="Comma-separated price kinds to rank: list, from (floors), lowest_now, bid_floor, contract [list].",
            metavar="BASIS[,BASIS]",
        ),
    ] = "list",
    max_price_age_days: Annotated[
        str | None,
        typer.Option(
            "--max-price-age-days",
            help="Prices whose page is older than N days are not current: left out [14].",
            metavar=metavars.INTEGER,
        ),
    ] = None,
    include_stale: Annotated[
        bool,
        typer.Option(
            "--include-stale",
            help="Also show offers whose price is older than the limit, last, with a stale-price warning.",
        ),
    ] = False,
    wide: WideFlag = False,
) -> None:
    """Rank the offers that fit a workload or an ad-hoc JOB by cost per successful checkpoint."""
    from gpuprice.commands.validation import parse_date, parse_max_age
    from gpuprice.models.ranking import LIMITS, PRICE_AGE, rank_offers
    from gpuprice.settings import Settings
    from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS

    if format not in FORMATS:
        raise BadInput(f"unknown format {format!r}; valid: {', '.join(FORMATS)}")
    count = _top(top)
    settings = Settings.from_env()
    chosen = choose_workload(workload, options, job, settings.workloads)
    bases = parse_price_bases(price_basis)
    max_age = parse_max_age("--max-price-age-days", max_price_age_days, MAX_PRICE_AGE_DAYS)
    day = parse_date(date, "--date") if date is not None else None

    from gpuprice.warehouse import queries

    settings.checked_home()
    con = queries.open_analytics(settings.analytics_path)
    try:
        if day is None:  # one notion of now: the newest snapshot date, said on stderr
            day = queries.newest_snapshot_date(con) or dt.datetime.now(dt.UTC).date()
            print(f"ranking offers as of the newest snapshot date {day.isoformat()}", file=sys.stderr)
        offers = queries.offers_as_of(con, day, bases)
        stale = queries.stale_providers(con, day)
    finally:
        con.close()
    everything = rank_offers(
        offers,
        [chosen],
        day,
        stale_providers=stale,
        include_infeasible=True,
        include_stale=True,
        max_price_age_days=max_age,
    )
    codes = everything["excluded_by"].map(set)
    shown = codes.map(
        lambda c: (include_infeasible or not c & set(LIMITS)) and (include_stale or PRICE_AGE not in c)
    )
    ranked = everything[shown.astype(bool)].copy()
    ranked["rank"] = range(1, len(ranked) + 1)
    if count is not None:
        ranked = ranked.head(count)
    records = ranking_records(ranked)
    if not records:
        print(_empty_reason(chosen, offers, everything, day, max_age), file=sys.stderr)
    if format == "json":
        write_json(records)
    elif format == "csv":
        _write_csv(records)
    else:
        _print_table(
            records,
            f"{chosen.name} ({tokens_text(chosen.training_tokens)} tokens) on {day.isoformat()}: "
            "total cost and cost per successful checkpoint",
            wide=wide,
        )
