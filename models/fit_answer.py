"""The memory answer ``fit`` and ``estimate`` print: the predicted peak, its error band and, with a
GPU, the verdict on that card (one implementation; the CLI only prints it)."""

from __future__ import annotations

from typing import Any

from gpuprice.models.memory import MemoryEstimate, TrainingSetup
from gpuprice.models.memory_band import band_for


def band_fields(setup: TrainingSetup, estimate: MemoryEstimate) -> dict[str, Any]:
    """``band_gb`` {low, high} around ``per_gpu_gb`` and the text saying what it rests on."""
    band = band_for(setup)
    low, high = band.apply(estimate.per_gpu_gb)
    return {
        "band_gb": {"low": round(low, 3), "high": round(high, 3)},
        "band": band.contract_dict(),
        "band_note": band.text(estimate.per_gpu_gb),
    }


def gpu_fields(setup: TrainingSetup, estimate: MemoryEstimate, gpu: str) -> dict[str, Any]:
    """The GPU check: ``gpu``, ``gpu_memory_gb`` (usable 1e9 bytes as sold), ``fits`` (the
    predicted device peak fits, margin aside), ``verdict``, ``headroom_gb`` and the note."""
    from gpuprice.models.catalog import resolve_gpu

    spec = resolve_gpu(gpu)
    capacity = spec.usable_memory_gb
    device_band = band_for(setup).apply(estimate.device_gb)
    verdict = estimate.verdict(capacity, device_band)
    return {
        "gpu": spec.slug,
        "gpu_memory_gb": round(capacity, 3),
        "gpu_memory_sold": f"{spec.memory_gb:g} GB",
        "fits": verdict.fits,
        "verdict": verdict.verdict,
        "headroom_gb": round(verdict.headroom_gb, 3),
        "margin_gb": round(verdict.margin_gb, 3),
        "band_crosses_capacity": verdict.band_crosses_capacity,
        "verdict_note": verdict.note(),
    }
