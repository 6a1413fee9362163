"""gpuprice fit: predicted peak training memory per GPU, and whether it fits a GPU."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from gpuprice.commands.model_options import (
    BatchOpt,
    ConfigOpt,
    GpuOpt,
    GpusOpt,
    GradCkptOpt,
    JsonOpt,
    LoraRankOpt,
    LoraTargetsOpt,
    MarginOpt,
    MicroBatchOpt,
    MethodOpt,
    ModelOpt,
    OptimizerOpt,
    ParamsBOpt,
    PrecisionOpt,
    SeqLenOpt,
    ShardingOpt,
    read_batch_csv,
    setup_from_batch_row,
    setup_from_options,
)
from gpuprice.errors import BadInput
from models.memory import BREAKDOWN_TERMS, MemoryEstimate, TrainingSetup, estimate_memory


def fit_result(setup: TrainingSetup, gpu: str | None) -> dict[str, Any]:
    """The ``fit --json`` object: contract fields, the setup echoed, and the GPU check if asked."""
    estimate = estimate_memory(setup)
    result: dict[str, Any] = {
        "model": setup.arch.name,
        "method": setup.method,
        "optimizer": setup.optimizer,
        "precision": setup.precision,
        "seq_len": setup.seq_len,
        "micro_batch": setup.micro_batch,
        "grad_checkpointing": setup.grad_checkpointing,
        "gpus": setup.gpus,
        "sharding": setup.sharding,
        **estimate.contract_dict(),
    }
    if gpu is not None:
        result.update(gpu_check(estimate, gpu, result["planning_gb"]))
    return result


def gpu_check(estimate: MemoryEstimate, gpu: str, planning_gb: float) -> dict[str, Any]:
    """``fits`` when the planning figure (peak + margin) is within the card; headroom may be negative."""
    from models.catalog import get_gpu

    spec = get_gpu(gpu.strip().lower())
    memory = float(spec.memory_gb)
    return {
        "gpu": spec.slug,
        "gpu_memory_gb": memory,
        "fits": planning_gb <= memory,
        "headroom_gb": round(memory - planning_gb, 3),
    }


def _print_table(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(
        f"[bold]{result['model']}[/bold]: {result['method']}, {result['optimizer']}, {result['precision']}, "
        f"seq {result['seq_len']} x micro-batch {result['micro_batch']}"
        f"{', grad checkpointing' if result['grad_checkpointing'] else ''}, "
        f"{result['gpus']} GPU(s), sharding {result['sharding']}"
    )
    table = Table(show_header=True)
    table.add_column("term")
    table.add_column("GB per GPU", justify="right")
    for term in BREAKDOWN_TERMS:
        table.add_row(term, f"{result['breakdown'][term]:.2f}")
    table.add_row("peak (per_gpu_gb)", f"{result['per_gpu_gb']:.2f}", style="bold")
    table.add_row(f"planning (+{result['margin']:.0%})", f"{result['planning_gb']:.2f}", style="bold")
    console.print(table)
    if "gpu" in result:
        verdict = "fits" if result["fits"] else "does NOT fit"
        console.print(
            f"{result['gpu']} ({result['gpu_memory_gb']:g} GB): {verdict}, headroom {result['headroom_gb']:+.2f} GB"
        )


def register(app: typer.Typer) -> None:
    @app.command("fit")
    def fit(
        model: ModelOpt = None,
        config: ConfigOpt = None,
        params_b: ParamsBOpt = None,
        method: MethodOpt = None,
        optimizer: OptimizerOpt = None,
        precision: PrecisionOpt = None,
        seq_len: SeqLenOpt = None,
        micro_batch: MicroBatchOpt = None,
        grad_checkpointing: GradCkptOpt = None,
        lora_rank: LoraRankOpt = None,
        lora_targets: LoraTargetsOpt = None,
        gpus: GpusOpt = None,
        sharding: ShardingOpt = None,
        margin: MarginOpt = None,
        gpu: GpuOpt = None,
        json_out: JsonOpt = False,
        batch: BatchOpt = None,
    ) -> None:
        """Predict peak training memory per GPU (GB) and whether it fits a GPU."""
        options = dict(
            model=model, config=config, params_b=params_b, method=method, optimizer=optimizer,
            precision=precision, seq_len=seq_len, micro_batch=micro_batch,
            grad_checkpointing=grad_checkpointing, lora_rank=lora_rank, lora_targets=lora_targets,
            gpus=gpus, sharding=sharding, margin=margin,
        )
        if batch is not None:
            _run_batch(batch, options, gpu)
            return
        result = fit_result(setup_from_options(**options), gpu)
        if json_out:
            json.dump(result, sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            _print_table(result)


def _run_batch(path: Any, options: dict[str, Any], gpu: str | None) -> None:
    """Validate every row first, then print one JSON line per row in file order."""
    rows = read_batch_csv(path)
    results = []
    for row in rows:
        setup = setup_from_batch_row(row, options)
        row_gpu = row.values.get("gpu", gpu)
        try:
            results.append(fit_result(setup, row_gpu))
        except BadInput as exc:
            raise BadInput(f"{row.where()}: {exc}") from None
    for result in results:
        sys.stdout.write(json.dumps(result) + "\n")
