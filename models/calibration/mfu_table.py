"""Print the "Calibrated MFU table" of ``models/mfu_calibration.md`` from the shipped model.

    python -m gpuprice.models.calibration.mfu_table

One row per GPU: its throughput family, the efficiency it gets (its own or a borrowed one), and
MFU (tokens/s per GPU) of six reference jobs at 2,048 tokens, bf16 mixed precision, the fused
causal attention kernel, full activation checkpointing and one micro-batch per optimizer step:
micro-batch 4 for the 8B model and 2 for the 70B. Memory fit is not checked here (the ranking
does that). ``tests/test_throughput_accuracy.py`` checks that the document's table is this output.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuprice.models.architectures import resolve_model
from gpuprice.models.gpu_hardware import gpu_profile
from gpuprice.models.throughput import predict_throughput
from gpuprice.models.throughput_parameters import CALIBRATED_PARAMETERS

GPUS = (
    "a100-80gb-sxm",
    "a100-80gb-pcie",
    "h100-sxm",
    "h100-pcie",
    "h200-sxm",
    "b200",
    "l40s",
    "rtx-6000-ada",
    "a6000",
    "rtx-4090",
    "rtx-5090",
    "rtx-pro-6000",
    "rtx-pro-6000-maxq",
)


@dataclass(frozen=True)
class ReferenceJob:
    title: str
    model: str
    method: str
    gpus: int
    micro_batch: int
    sharding: str = "none"


JOBS = (
    ReferenceJob("8B full, 1 GPU", "meta-llama/Llama-3.1-8B", "full", 1, 4),
    ReferenceJob("8B LoRA, 1 GPU", "meta-llama/Llama-3.1-8B", "lora", 1, 4),
    ReferenceJob("8B QLoRA, 1 GPU", "meta-llama/Llama-3.1-8B", "qlora", 1, 4),
    ReferenceJob("8B full, 8 GPUs ZeRO-3", "meta-llama/Llama-3.1-8B", "full", 8, 4, "zero3"),
    ReferenceJob("70B full, 8 GPUs ZeRO-3", "meta-llama/Llama-3.1-70B", "full", 8, 2, "zero3"),
    ReferenceJob("70B QLoRA, 1 GPU", "meta-llama/Llama-3.1-70B", "qlora", 1, 2),
)
SEQ_LEN = 2048


def _cell(job: ReferenceJob, gpu: str) -> str:
    arch = resolve_model(job.model, None, None)
    result = predict_throughput(
        arch,
        job.method,
        gpu,
        gpus=job.gpus,
        seq_len=SEQ_LEN,
        micro_batch=job.micro_batch,
        grad_checkpointing=True,
        sharding=job.sharding,
        attention="flash",
        lora_targets="all",
    )
    return f"{result.mfu:.2f} ({result.tokens_per_sec_per_gpu:,.0f})"


def table() -> str:
    """The markdown table, header included."""
    header = "| GPU | family | efficiency | " + " | ".join(job.title for job in JOBS) + " |"
    lines = [header, "|" + "---|" * (3 + len(JOBS))]
    for gpu in GPUS:
        family = gpu_profile(gpu).family
        efficiency = CALIBRATED_PARAMETERS.efficiency_of(family)
        cells = " | ".join(_cell(job, gpu) for job in JOBS)
        lines.append(f"| {gpu} | {family} | {efficiency:.3f} | {cells} |")
    return "\n".join(lines)


def main() -> None:
    print(table())


if __name__ == "__main__":
    main()
