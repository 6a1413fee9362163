"""gpuprice estimate: tokens/s, MFU, hours and cost of one training run on a GPU."""

from __future__ import annotations

import functools
import math
from typing import Annotated, Any

import typer

from gpuprice.commands import metavars
from gpuprice.commands.model_options import (
    MODEL_OPTION_NAMES,
    BatchOpt,
    BatchRow,
    GpuOpt,
    JsonOpt,
    print_result,
    run_batch,
    sequence_text,
    setup_echo,
    setup_from_options,
    with_model_options,
)
from gpuprice.errors import BadInput
from gpuprice.models.cost import hours_for_tokens, run_cost
from gpuprice.models.memory import TrainingSetup, estimate_memory
from gpuprice.models.throughput import predict_throughput

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
    typer.Option("--usd-per-gpu-hour", help="Price per GPU-hour for the cost.", metavar=metavars.FLOAT),
]
_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}


def parse_number(option: str, text: str | None, *, suffixes: bool = False) -> float | None:
    """A number from the command line or a CSV cell ("1e9", "1_000_000", "500M" with ``suffixes``)."""
    if text is None:
        return None
    cleaned = text.strip().replace("_", "").replace(",", "")
    scale = 1.0
    if suffixes and cleaned[-1:].lower() in _SUFFIXES:
        scale, cleaned = _SUFFIXES[cleaned[-1].lower()], cleaned[:-1]
    try:
        value = float(cleaned) * scale
    except ValueError:
        raise BadInput(f"{option} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise BadInput(f"{option} {text!r} is not a finite number")
    return value


RUN_COLUMNS = ("gpu", "tokens", "hours", "usd_per_gpu_hour")


class RunRequest:
    """What to estimate besides the training setup: GPU, length and price (validated)."""

    def __init__(
        self, gpu: str | None, tokens: float | None, hours: float | None, price: float | None
    ) -> None:
        """Numbers already parsed (see :func:`parse_number`); checked for sense here."""
        from gpuprice.models.catalog import get_gpu

        if gpu is None or not gpu.strip():
            raise BadInput("--gpu is required (a GPU slug, e.g. h100-sxm)")
        self.gpu = get_gpu(gpu.strip().lower()).slug
        if (tokens is None) == (hours is None):
            raise BadInput("give exactly one of --tokens (training tokens) or --hours (assumed wall hours)")
        for name, value in (("--tokens", tokens), ("--hours", hours)):
            if value is not None and value <= 0:
                raise BadInput(f"{name} {value:g} must be a positive number")
        if price is not None and price <= 0:
            raise BadInput(f"--usd-per-gpu-hour {price:g} must be a positive price")
        self.tokens, self.hours, self.price = tokens, hours, price


def estimate_result(setup: TrainingSetup, request: RunRequest) -> dict[str, Any]:
    """The ``estimate --json`` object: contract fields first, then the setup and the memory check."""
    speed = predict_throughput(
        setup.arch,
        setup.method,
        request.gpu,
        setup.gpus,
        setup.seq_len,
        setup.micro_batch,
        setup.grad_checkpointing,
        setup.precision,
        setup.sharding,
    )
    cluster_rate = speed.tokens_per_sec_per_gpu * setup.gpus
    if request.hours is not None:
        hours, tokens = request.hours, cluster_rate * request.hours * 3600.0
    else:
        assert request.tokens is not None
        hours, tokens = (
            hours_for_tokens(request.tokens, speed.tokens_per_sec_per_gpu, setup.gpus),
            request.tokens,
        )
    cost = run_cost(setup.gpus, hours, request.price)
    memory = estimate_memory(setup)
    from gpuprice.models.catalog import get_gpu

    gpu_memory = get_gpu(request.gpu).memory_gb
    return {
        "tokens_per_sec_per_gpu": round(speed.tokens_per_sec_per_gpu, 2),
        "mfu": round(speed.mfu, 4),
        "hours": round(hours, 4),
        "gpu_hours": round(cost.gpu_hours, 4),
        "cost_usd": cost.cost_usd,
        "usd_per_gpu_hour": request.price,
        "tokens": round(tokens),
        "hfu": round(speed.hfu, 4),
        "flops_per_token": speed.flops_per_token,
        "communication_share": round(speed.communication_share, 4),
        **setup_echo(setup, request.gpu),
        "per_gpu_gb": round(memory.per_gpu_gb, 3),
        "planning_gb": round(memory.planning_gb, 3),
        "gpu_memory_gb": gpu_memory,
        "fits": memory.planning_gb <= gpu_memory,
    }


def _print_summary(result: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console()
    console.print(
        f"[bold]{result['model']}[/bold] {result['method']} on {result['gpus']}x {result['gpu']} "
        f"(sharding {result['sharding']}, {sequence_text(result)})"
    )
    console.print(
        f"  throughput  {result['tokens_per_sec_per_gpu']:,.0f} tokens/s per GPU, MFU {result['mfu']:.1%}"
    )
    console.print(
        f"  run         {result['hours']:,.2f} h for {result['tokens']:,.0f} tokens = {result['gpu_hours']:,.2f} GPU-hours"
    )
    if result["cost_usd"] is None:
        console.print("  cost        give --usd-per-gpu-hour to price the run")
    else:
        console.print(
            f"  cost        ${result['cost_usd']:,.2f} at ${result['usd_per_gpu_hour']:g} per GPU-hour"
        )
    verdict = "fits" if result["fits"] else "does NOT fit"
    console.print(
        f"  memory      {result['planning_gb']:.1f} GB planned per GPU: {verdict} in {result['gpu_memory_gb']:g} GB"
    )


def register(app: typer.Typer) -> None:
    @app.command("estimate")
    @with_model_options
    def estimate(
        options: dict[str, Any],
        gpu: GpuOpt = None,
        tokens: TokensOpt = None,
        hours: HoursOpt = None,
        usd_per_gpu_hour: PriceOpt = None,
        json_out: JsonOpt = False,
        batch: BatchOpt = None,
    ) -> None:
        """Estimate tokens/s, MFU, hours and cost of a training run (GPUs x hours x $/GPU-hour)."""
        numbers = (
            parse_number("--tokens", tokens, suffixes=True),
            parse_number("--hours", hours),
            parse_number("--usd-per-gpu-hour", usd_per_gpu_hour),
        )
        if batch is not None:
            run_batch(
                batch,
                options,
                functools.partial(_row_result, gpu, *numbers),
                allowed_columns=(*MODEL_OPTION_NAMES, *RUN_COLUMNS),
            )
            return
        request = RunRequest(gpu, *numbers)
        print_result(estimate_result(setup_from_options(**options), request), json_out, _print_summary)


def _row_result(
    gpu: str | None,
    tokens: float | None,
    hours: float | None,
    price: float | None,
    row: BatchRow,
    setup: TrainingSetup,
) -> dict[str, Any]:
    """One --batch row's estimate: its gpu and price cells replace the command-line values, and
    its tokens or hours replaces both (they are alternatives)."""
    row_tokens = parse_number("tokens", row.values.get("tokens"), suffixes=True)
    row_hours = parse_number("hours", row.values.get("hours"))
    if row_tokens is None and row_hours is None:
        row_tokens, row_hours = tokens, hours
    row_price = parse_number("usd_per_gpu_hour", row.values.get("usd_per_gpu_hour"))
    request = RunRequest(
        row.values.get("gpu", gpu), row_tokens, row_hours, row_price if row_price is not None else price
    )
    return estimate_result(setup, request)
