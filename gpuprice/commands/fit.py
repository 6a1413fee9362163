"""gpuprice fit: predicted peak training memory per GPU, and whether it fits a GPU."""

from __future__ import annotations

from typing import Any

from gpuprice.commands.batch import run_batch
from gpuprice.commands.model_options import (
    BatchOpt,
    GpuOpt,
    JsonOpt,
    print_result,
    sequence_text,
    setup_echo,
    setup_from_options,
    with_model_options,
)
from gpuprice.models.fit_answer import band_fields, estimate_on, gpu_fields
from gpuprice.models.memory import BREAKDOWN_TERMS, TrainingSetup


def fit_result(setup: TrainingSetup, gpu: str | None) -> dict[str, Any]:
    """The ``fit --json`` object: contract fields, the setup echoed, the error band and, with a
    GPU, the verdict on it (``models/fit_answer.py``)."""
    estimate = estimate_on(setup, gpu)
    result: dict[str, Any] = {
        **setup_echo(setup),
        **estimate.contract_dict(),
        **band_fields(setup, estimate),
    }
    if gpu is not None:
        result.update(gpu_fields(setup, estimate, gpu))
    return result


def _print_table(result: dict[str, Any]) -> None:
    from rich.console import Console

    from gpuprice.commands.tables import Column, number, print_table, terminal_width

    console = Console(width=terminal_width(), highlight=False)
    # the answer first (the verdict on a GPU, then the peak and its band); then how it was reached
    band = result["band_gb"]
    peak = (
        f"peak {result['per_gpu_gb']:.1f} GB per GPU ({result['memory_metric']}; "
        f"band {band['low']:.1f}-{band['high']:.1f} GB)"
    )
    if "gpu" in result:
        console.print(
            f"{result['gpu']}, margin {result['margin']:.0%}: {result['verdict_note']}", markup=False
        )
        peak += f" of {result['gpu_memory_gb']:g} GB usable ({result['gpu_memory_sold']} sold)"
    console.print(peak, markup=False)
    console.print(
        f"[bold]{result['model']}[/bold]: {result['method']}, {result['optimizer']}, {result['precision']}, "
        f"{sequence_text(result)}, {result['gpus']} GPU(s), sharding {result['sharding']}, "
        f"framework {result['framework']}, memory metric {result['memory_metric']}"
    )
    breakdown = result["breakdown"]
    rows = [[term, number(breakdown[term], 2)] for term in BREAKDOWN_TERMS]
    rows += [
        ["cuda context", number(breakdown["cuda_context_gb"], 2)],
        ["allocator slack", number(breakdown["allocator_slack_gb"], 2)],
        ["peak (per_gpu_gb)", number(result["per_gpu_gb"], 2)],
        ["device figure (what the verdict judges)", number(result["device_gb"], 2)],
        [f"planning (margin {result['margin']:.0%} of the card)", number(result["planning_gb"], 2)],
    ]
    print_table([Column("term"), Column("GB per GPU", numeric=True)], rows)
    for line in result["assumptions"]:
        console.print(f"  - {line}", markup=False)
    console.print(f"  band: {result['band_note']}", markup=False)


@with_model_options
def fit(
    options: dict[str, Any], gpu: GpuOpt = None, json_out: JsonOpt = False, batch: BatchOpt = None
) -> None:
    """Predict peak training memory per GPU (GB) and whether it fits a GPU."""
    if batch is not None:
        # A row's gpu column replaces --gpu.
        run_batch(batch, options, lambda row, setup: fit_result(setup, row.values.get("gpu", gpu)))
        return
    print_result(fit_result(setup_from_options(**options), gpu), json_out, _print_table)
