"""gpuprice estimate: tokens/s, MFU, hours and cost of one training run on a GPU.

Slightly over ~400 lines: the command's options, their checks (``RunRequest``) and its two
printouts (JSON and the summary with its bands) are one command; the arithmetic is in ``models``.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuprice.commands import metavars
from gpuprice.commands.batch import BatchRow, run_batch
from gpuprice.commands.model_options import (
    MODEL_OPTION_NAMES,
    BatchOpt,
    GpuOpt,
    JsonOpt,
    print_result,
    sequence_text,
    setup_echo,
    setup_from_options,
    with_model_options,
)
from gpuprice.errors import BadInput
from gpuprice.models.cost import hours_for_tokens, run_cost
from gpuprice.models.frameworks import defaults_of as framework_defaults
from gpuprice.models.memory import TrainingSetup, estimate_memory
from gpuprice.models.memory_setup import keeps_scores
from gpuprice.models.throughput import Throughput, predict_throughput, time_breakdown
from gpuprice.models.throughput_band import SpeedBand, band_dict, gpu_speed_band, low_high
from gpuprice.quantities import parse_number
from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS

# Read as text and parsed here, so a bad value is named in the one-line error.
TokensOpt = Annotated[
    str | None,
    typer.Option(
        "--tokens", help="Training tokens, e.g. 1e9, 500M, 2B (gives the hours).", metavar=metavars.TOKENS
    ),
]
HoursOpt = Annotated[
    str | None,
    typer.Option("--hours", help="Assumed wall hours (instead of --tokens).", metavar=metavars.FLOAT),
]
PriceOpt = Annotated[
    str | None,
    typer.Option(
        "--usd-per-gpu-hour",
        help="Price per GPU-hour [the cheapest list price for this GPU and count in the warehouse].",
        metavar=metavars.FLOAT,
    ),
]
TierOpt = Annotated[
    str,
    typer.Option(
        "--tier",
        help="Tiers the market price may come from [on_demand].",
        metavar=metavars.choice(("on_demand", "spot", "reserved")) + ",...",
    ),
]
DateOpt = Annotated[
    str | None,
    typer.Option(
        "--date", help="Market prices as of YYYY-MM-DD [the newest snapshot date].", metavar=metavars.DATE
    ),
]
# Bounds far outside real runs (the largest published runs are ~3e13 tokens, months long) that
# keep the arithmetic meaningful; the price bound is the offer schema's.
MAX_TOKENS = 1e16
MAX_HOURS = 1e6
MAX_USD_PER_GPU_HOUR = 1000.0

NodeNetworkOpt = Annotated[
    str | None,
    typer.Option(
        "--node-network-gbps",
        help="Network between nodes, Gb/s per node over all its NICs (400 for one 400G link, 3200 for "
        "8 x 400G); used when --gpus spans nodes [the GPU family's usual cluster fabric].",
        metavar=metavars.FLOAT,
    ),
]
RUN_COLUMNS = ("gpu", "tokens", "hours", "usd_per_gpu_hour", "node_network_gbps")


class RunRequest:
    """What to estimate besides the training setup: GPU, length and price (validated)."""

    def __init__(
        self,
        gpu: str | None,
        tokens: float | None,
        hours: float | None,
        price: float | None,
        node_network_gbps: float | None = None,
        *,
        speed_only: bool = False,
    ) -> None:
        """Numbers already parsed (see :func:`parse_number`); checked for sense here. With
        ``speed_only`` (a ``--batch`` row), neither tokens nor hours is allowed: the answer then
        has the speed and no hours or cost."""
        from gpuprice.models.catalog import resolve_gpu
        from gpuprice.models.gpu_hardware import MAX_NODE_NETWORK_GBPS

        if gpu is None or not gpu.strip():
            raise BadInput("--gpu is required (a GPU slug, e.g. h100-sxm)")
        self.gpu = resolve_gpu(gpu).slug
        given = (tokens is not None) + (hours is not None)
        if given == 2 or (given == 0 and not speed_only):
            raise BadInput("give exactly one of --tokens (training tokens) or --hours (assumed wall hours)")
        for name, value in (("--tokens", tokens), ("--hours", hours)):
            if value is not None and value <= 0:
                raise BadInput(f"{name} {value:g} must be a positive number")
        if tokens is not None and tokens > MAX_TOKENS:
            raise BadInput(f"--tokens {tokens:g} is beyond any training run; at most {MAX_TOKENS:g}")
        if hours is not None and hours > MAX_HOURS:
            raise BadInput(f"--hours {hours:g} is beyond any training run; at most {MAX_HOURS:g}")
        if price is not None and price <= 0:
            raise BadInput(f"--usd-per-gpu-hour {price:g} must be a positive price")
        if price is not None and price >= MAX_USD_PER_GPU_HOUR:
            raise BadInput(
                f"--usd-per-gpu-hour {price:g} is no GPU-hour price; below {MAX_USD_PER_GPU_HOUR:g}"
            )
        if node_network_gbps is not None and not 0 < node_network_gbps <= MAX_NODE_NETWORK_GBPS:
            raise BadInput(
                f"--node-network-gbps {node_network_gbps:g} is no network between nodes; "
                f"give Gb/s per node, above 0 and at most {MAX_NODE_NETWORK_GBPS:g}"
            )
        self.tokens, self.hours, self.price = tokens, hours, price
        self.node_network_gbps = node_network_gbps


# (gpu slug, GPU count) -> the offer priced, or None (warehouse.queries.cheapest_list_offer).
MarketLookup = Callable[[str, int], dict[str, Any] | None]


def estimate_result(
    setup: TrainingSetup, request: RunRequest, market: MarketLookup | None = None
) -> dict[str, Any]:
    """The ``estimate --json`` object: contract fields first, then the price, the setup and the
    memory check. Without a price the cost uses ``market`` (the cheapest list offer, named in
    ``offer``). A setup that does not fit has ``fits`` false and its cost marked by ``cost_note``
    ("does not fit: ..."), so the guide's table can still be reproduced from given prices."""
    speed = _predicted_speed(setup, request.gpu, request.node_network_gbps)
    cluster_rate = speed.tokens_per_sec_per_gpu * setup.gpus
    hours: float | None
    tokens: float | None
    if request.hours is not None:
        hours, tokens = request.hours, cluster_rate * request.hours * 3600.0
    elif request.tokens is not None:
        hours, tokens = (
            hours_for_tokens(request.tokens, speed.tokens_per_sec_per_gpu, setup.gpus),
            request.tokens,
        )
    else:  # a --batch row that asks for the speed alone
        hours, tokens = None, None
    from gpuprice.models.fit_answer import band_fields, estimate_on, gpu_fields

    memory = estimate_on(setup, request.gpu)

    check = gpu_fields(setup, memory, request.gpu)  # the device figure, whatever --memory-metric reports
    gpu_memory, fits = check["gpu_memory_gb"], check["fits"]
    price, offer, note = _price_for(setup, request, market)
    if not fits:
        note = (
            f"does not fit: {memory.device_gb:.1f} GB predicted per GPU exceeds the "
            f"{gpu_memory:g} GB of {request.gpu}{_fitting_sharding_hint(setup, gpu_memory)}"
        )
    band = gpu_speed_band(setup.method, request.gpu)
    if hours is None or tokens is None:
        length: dict[str, Any] = {"hours": None, "gpu_hours": None, "cost_usd": None}
        if fits:  # a price note speaks of a cost that is not asked for
            note = "no tokens or hours given: the speed alone (no hours or cost)"
        bands: dict[str, Any] = {"hours_band": None, "cost_band": None, "tokens_band": None}
    else:
        cost = run_cost(setup.gpus, hours, price)
        length = {"hours": round(hours, 4), "gpu_hours": round(cost.gpu_hours, 4), "cost_usd": cost.cost_usd}
        bands = run_band(band, request, hours, tokens, price, setup.gpus)
    return {
        "tokens_per_sec_per_gpu": round(speed.tokens_per_sec_per_gpu, 2),
        "mfu": round(speed.mfu, 4),
        **length,
        "usd_per_gpu_hour": price,
        "price_source": "given" if request.price is not None else "market" if offer is not None else None,
        "offer": offer,
        "cost_note": note,
        "tokens": None if tokens is None else round(tokens),
        # out-of-sample band of tokens/s for the method (models/throughput_band.py), and what it
        # makes of the hours and cost (--tokens) or of the tokens trained (--hours)
        "tokens_per_sec_band": band_dict(band, speed.tokens_per_sec_per_gpu),
        **bands,
        "hfu": round(speed.hfu, 4),
        "flops_per_token": speed.flops_per_token,
        "communication_share": round(speed.communication_share, 4),
        # the network between nodes the estimate assumed (null: the GPU family's usual fabric)
        "node_network_gbps": request.node_network_gbps,
        "grad_accum": setup.grad_accum,
        # where a step's time goes (shares of the time per token; models/throughput.py's terms)
        "time_breakdown": time_breakdown(speed),
        **setup_echo(setup, request.gpu),
        "per_gpu_gb": round(memory.per_gpu_gb, 3),
        "planning_gb": round(memory.planning_gb, 3),
        "memory_metric": setup.memory_metric,
        "margin": setup.margin,
        **band_fields(setup, memory),
        **{k: v for k, v in check.items() if k != "gpu"},
    }


def run_band(
    band: SpeedBand, request: RunRequest, hours: float, tokens: float, price: float | None, gpus: int
) -> dict[str, Any]:
    """``hours_band`` and ``cost_band`` {low, high} (the run's cost at the band's hours; null
    without a price) for a given length in tokens; ``tokens_band`` for given hours (hours and
    cost are then the assumption, so their bands are null)."""
    if request.hours is not None:
        return {
            "hours_band": None,
            "cost_band": None,
            "tokens_band": low_high(*band.tokens_per_sec(tokens), 0),
        }
    short, long = band.hours(hours)
    cost_band = None
    if price is not None:
        ends = [run_cost(gpus, h, price).cost_usd or 0.0 for h in (short, long)]
        cost_band = low_high(ends[0], ends[1], 2)
    return {"hours_band": low_high(short, long, 4), "cost_band": cost_band, "tokens_band": None}


def _predicted_speed(setup: TrainingSetup, gpu: str, node_network_gbps: float | None = None) -> Throughput:
    """The throughput model's prediction for the setup on ``gpu`` (its framework's AdamW step),
    over the stated network between nodes (None: the GPU family's usual fabric)."""
    from gpuprice.models.gpu_hardware import fabric_per_gpu

    return predict_throughput(
        setup.arch,
        setup.method,
        gpu,
        setup.gpus,
        setup.seq_len,
        setup.micro_batch,
        setup.grad_checkpointing,
        setup.precision,
        setup.sharding,
        compile=setup.compile,
        framework=setup.framework,
        keeps_scores=keeps_scores(setup),
        grad_accum=setup.grad_accum,
        optimizer=setup.optimizer,
        adamw_step=framework_defaults(setup.framework).adamw_step,
        attention=setup.attention,
        lora_targets=setup.lora_targets,
        selective_checkpointing=setup.activation_checkpointing == "selective",
        fabric_gbps_per_gpu=None if node_network_gbps is None else fabric_per_gpu(node_network_gbps),
    )


def _price_for(
    setup: TrainingSetup, request: RunRequest, market: MarketLookup | None
) -> tuple[float | None, dict[str, Any] | None, str | None]:
    """(price per GPU-hour, the market offer used, a note): the given price, else the cheapest
    current list offer from ``market``; a missing or too old market price is named in the note."""
    price, offer, note = request.price, None, None
    if price is None and market is not None:
        offer = market(request.gpu, setup.gpus)
        if offer is not None and not offer.get("current", True):
            # An older price is never the market price: named, not used (warehouse/staleness.py).
            note = (
                f"no current list price for {setup.gpus}x {request.gpu}: the cheapest older one is {offer['provider']}'s "
                f"${offer['usd_per_gpu_hour']:g} from a page {offer['price_age_days']} days old, over the "
                f"{MAX_PRICE_AGE_DAYS}-day limit; give --usd-per-gpu-hour"
            )
            offer = None
        elif offer is None:
            note = f"no list price for {setup.gpus}x {request.gpu} in the warehouse; give --usd-per-gpu-hour"
        price = offer["usd_per_gpu_hour"] if offer is not None else None
    return price, offer, note


def _fitting_sharding_hint(setup: TrainingSetup, gpu_memory: float) -> str:
    """ "; --sharding zero3 fits" when a sharding the setup does not use would hold it."""
    if setup.gpus < 2:
        return ""
    for sharding in ("zero2", "zero3"):
        if sharding != setup.sharding:
            other = estimate_memory(setup.model_copy(update={"sharding": sharding}))
            if other.verdict(gpu_memory).fits:  # the device figure, as fits judges it
                return f"; --sharding {sharding} fits ({other.device_gb:.1f} GB)"
    return ""


def _print_summary(result: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console()
    console.print(
        f"[bold]{result['model']}[/bold] {result['method']} on {result['gpus']}x {result['gpu']} "
        f"(sharding {result['sharding']}, {sequence_text(result)})"
    )
    console.print(
        f"  run         {result['hours']:,.2f} h for {result['tokens']:,.0f} tokens = {result['gpu_hours']:,.2f} GPU-hours"
    )
    offer = result["offer"]
    if result["cost_usd"] is None:
        note = result["cost_note"] or "give --usd-per-gpu-hour to price the run"
        console.print(f"  cost        none: {note}", soft_wrap=True)
    else:
        source = ""
        if offer is not None:
            nodes = f" ({offer['nodes']} nodes)" if offer["nodes"] > 1 else ""
            source = (
                f": {offer['provider']} {offer['sku']}{nodes}, {offer['tier']}, "
                f"list price observed {offer['observed_on']}"
            )
        rate = f"${result['usd_per_gpu_hour']:g} per GPU-hour"
        console.print(f"  cost        ${result['cost_usd']:,.2f} at {rate}{source}", soft_wrap=True)
        if not result["fits"]:
            console.print(f"              NOT a runnable setup, {result['cost_note']}", soft_wrap=True)
    console.print(
        f"  throughput  {result['tokens_per_sec_per_gpu']:,.0f} tokens/s per GPU, MFU {result['mfu']:.1%}"
    )
    shares = ", ".join(
        f"{name.replace('_', ' ')} {share:.0%}"
        for name, share in result["time_breakdown"].items()
        if share >= 0.005
    )
    console.print(
        f"              time: {shares} (optimizer step every {result['grad_accum']} micro-batch(es))",
        soft_wrap=True,
    )
    console.print(f"  band        {_speed_band_text(result)}", soft_wrap=True, markup=False)
    console.print(f"  memory      {result['band_note']}", soft_wrap=True, markup=False)
    console.print(
        f"              {result['gpu']} ({result['gpu_memory_gb']:g} GB usable), margin {result['margin']:.0%}: "
        f"{result['verdict_note']}",
        soft_wrap=True,
        markup=False,
    )


def _speed_band_text(result: dict[str, Any]) -> str:
    """The throughput band in one line: what it rests on, then hours and cost (or tokens)."""
    band = result["tokens_per_sec_band"]
    rests = (
        f"{band['coverage']:.0%} of {band['runs']} measured {band['runs_like']} runs "
        f"({band['validation'].split(':')[0]}) within {band['low_pct']:+g}%/{band['high_pct']:+g}% tokens/s"
    )
    if band.get("borrowed_efficiency_from"):
        ratio = band.get("borrowed_efficiency_ratio", 1.0)
        scaled = f" x {ratio:.2f}" if abs(ratio - 1.0) > 5e-3 else ""
        rests += (
            f", widened {band['widened_pct']:g}% "
            f"({result['gpu']} borrows {band['borrowed_efficiency_from']}'s efficiency{scaled})"
        )
    if result["tokens_band"] is not None:
        return f"{result['tokens_band']['low']:,.0f}-{result['tokens_band']['high']:,.0f} tokens: {rests}"
    hours = f"{result['hours_band']['low']:,.2f}-{result['hours_band']['high']:,.2f} h"
    if result["cost_band"] is not None:
        hours += f", ${result['cost_band']['low']:,.2f}-{result['cost_band']['high']:,.2f}"
    return f"{hours}: {rests}"


@with_model_options
def estimate(
    options: dict[str, Any],
    gpu: GpuOpt = None,
    tokens: TokensOpt = None,
    hours: HoursOpt = None,
    usd_per_gpu_hour: PriceOpt = None,
    tier: TierOpt = "on_demand",
    date: DateOpt = None,
    node_network_gbps: NodeNetworkOpt = None,
    json_out: JsonOpt = False,
    batch: BatchOpt = None,
) -> None:
    """Estimate tokens/s, MFU, hours and cost of a training run (GPUs x hours x $/GPU-hour);
    without --usd-per-gpu-hour the cheapest list price in the warehouse, named."""
    from gpuprice.commands.validation import parse_choices, parse_date
    from gpuprice.scrapers.offer import TIERS
    from gpuprice.settings import Settings

    numbers = (
        parse_number("--tokens", tokens, suffixes=True),
        parse_number("--hours", hours),
        parse_number("--usd-per-gpu-hour", usd_per_gpu_hour),
        parse_number("--node-network-gbps", node_network_gbps),
    )
    tiers = tuple(parse_choices("--tier", tier, TIERS) or ("on_demand",))
    day = parse_date(date, "--date") if date is not None else None
    market = _market(Settings.from_env().analytics_path, day, tiers)
    if batch is not None:
        run_batch(
            batch,
            options,
            functools.partial(_row_result, gpu, *numbers, market),
            allowed_columns=(*MODEL_OPTION_NAMES, *RUN_COLUMNS),
        )
        return
    request = RunRequest(gpu, *numbers)
    result = estimate_result(setup_from_options(**options), request, market)
    print_result(result, json_out, _print_summary)


def _market(analytics: Path, day: dt.date | None, tiers: tuple[str, ...]) -> MarketLookup:
    """Cheapest list offers from the published warehouse, looked up once per (GPU, count); no
    warehouse means no market price (the estimate still runs)."""

    @functools.cache
    def lookup(gpu: str, gpus: int) -> dict[str, Any] | None:
        from gpuprice.warehouse import queries

        if not analytics.exists():
            return None
        con = queries.open_analytics(analytics)
        try:
            # One notion of now: without --date, the newest snapshot date (as rank and history).
            when = day or queries.newest_snapshot_date(con) or dt.datetime.now(dt.UTC).date()
            return queries.cheapest_list_offer(con, gpu, gpus, when, tiers)
        finally:
            con.close()

    return lookup


def _row_result(
    gpu: str | None,
    tokens: float | None,
    hours: float | None,
    price: float | None,
    network: float | None,
    market: MarketLookup | None,
    row: BatchRow,
    setup: TrainingSetup,
) -> dict[str, Any]:
    """One --batch row's estimate: its gpu and price cells replace the command-line values, and
    its tokens or hours replaces both (they are alternatives). A row with neither, on a command
    line with neither, gets its speed alone: a file of measured runs asks for tokens/s."""
    row_tokens = parse_number("tokens", row.values.get("tokens"), suffixes=True)
    row_hours = parse_number("hours", row.values.get("hours"))
    if row_tokens is None and row_hours is None:
        row_tokens, row_hours = tokens, hours
    row_price = parse_number("usd_per_gpu_hour", row.values.get("usd_per_gpu_hour"))
    row_network = parse_number("node_network_gbps", row.values.get("node_network_gbps"))
    request = RunRequest(
        row.values.get("gpu", gpu),
        row_tokens,
        row_hours,
        row_price if row_price is not None else price,
        row_network if row_network is not None else network,
        speed_only=True,
    )
    return estimate_result(setup, request, market)
