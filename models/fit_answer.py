"""The memory answer ``fit`` and ``estimate`` print: the predicted peak, its error band and, with a
GPU, the verdict on that card (one implementation; the CLI only prints it)."""

from __future__ import annotations

from typing import Any

from gpuprice.models.memory import MemoryEstimate, TrainingSetup, estimate_memory
from gpuprice.models.memory_band import band_for


def card_gb(gpu: str | None) -> float | None:
    """The named card's usable 1e9 bytes (an "80 GB" card holds 85.9), None without a card."""
    from gpuprice.models.catalog import resolve_gpu

    return None if gpu is None else resolve_gpu(gpu).usable_memory_gb


def estimate_on(setup: TrainingSetup, gpu: str | None) -> MemoryEstimate:
    """The memory estimate, on the named card when there is one (models/memory.py: what a card
    takes back before it runs out does not show beyond it)."""
    return estimate_memory(setup, card_gb=card_gb(gpu))


def band_fields(setup: TrainingSetup, estimate: MemoryEstimate) -> dict[str, Any]:
    """``band_gb`` {low, high} around ``per_gpu_gb`` and the text saying what it rests on. On a
    card the high end stops at what the metric can read there (``MemoryEstimate.ceiling_gb``)."""
    band = band_for(setup)
    low, high = band.apply(estimate.per_gpu_gb)
    if estimate.ceiling_gb is not None:
        high = min(high, max(estimate.ceiling_gb, estimate.per_gpu_gb))
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
