"""The memory verdict of a report: which GPU configurations hold a workload, and its memory terms.

Filled by the report build from the memory sweep (``reports.loading``, ``reports.workload_info``);
the page's verdict matrix and the memory chart only read it.
"""

from __future__ import annotations

import datetime as dt

from pydantic import Field

from gpuprice.models.choices import GPUS_PER_NODE
from gpuprice.reports.report_model import FrozenModel

MEMORY_PARTS: tuple[str, ...] = ("weights", "gradients", "optimizer", "activations", "logits", "overhead")


# Setups that park state in CPU memory: they "fit" almost anywhere but train far slower, and the
# ranking does not use them, so the verdict counts them apart.
OFFLOAD_SHARDINGS = frozenset({"offload"})


class MemoryFitRow(FrozenModel):
    gpu: str
    gpu_count: int
    sharding: str
    per_gpu_gb: float
    planning_gb: float
    gpu_memory_gb: float
    fits: bool
    headroom_gb: float
    least_complex: bool = False
    # Filled by the report build (workload_info.with_verdicts): models/fit_verdict.py's verdict at
    # the sweep's margin, and the out-of-sample band of the predicted peak (models/memory_band.py).
    verdict: str | None = None
    band_low_gb: float | None = None
    band_high_gb: float | None = None
    band_crosses_capacity: bool = False

    @property
    def device_gb(self) -> float:
        """The predicted device peak the verdict judges (card - headroom)."""
        return self.gpu_memory_gb - self.headroom_gb

    @property
    def verdict_word(self) -> str:
        """fits / tight / does not fit (the fit verdict's words for people)."""
        if self.verdict is None:  # rows read without with_verdicts: from the stored columns
            return "fits" if self.fits else ("tight" if self.headroom_gb >= 0 else "does not fit")
        return self.verdict.replace("_", " ")

    @property
    def offload(self) -> bool:
        return self.sharding in OFFLOAD_SHARDINGS

    @property
    def fits_on_gpu(self) -> bool:
        """Fits with everything in GPU memory (no CPU offload)."""
        return self.fits and not self.offload


class MemoryBar(FrozenModel):
    """Per-GPU memory of one parallel setup, split into the memory model's terms (GB)."""

    label: str
    gpu_count: int
    sharding: str
    parts: dict[str, float]
    planning_gb: float | None = None

    @property
    def total(self) -> float:
        return sum(self.parts.values())


class GpuCapacity(FrozenModel):
    """A GPU type's memory, drawn as a reference line over the memory bars."""

    gpu: str
    memory_gb: float


# Simpler parallel setups first: a reader wants the least engineering that fits.
SHARDING_COMPLEXITY: dict[str, int] = {"none": 0, "zero2": 1, "fsdp": 2, "zero3": 2, "offload": 4}


def sharding_rank(sharding: str) -> int:
    return SHARDING_COMPLEXITY.get(sharding, 3)


class VerdictRow(FrozenModel):
    """One GPU type across GPU counts: the simplest setup that fits at each count (or the nearest miss)."""

    gpu: str
    gpu_memory_gb: float
    cells: list[MemoryFitRow | None]
    fewest: MemoryFitRow | None = Field(default=None, description="fewest GPUs that fit, any count")


class MemoryVerdict(FrozenModel):
    """Which GPU configurations hold the workload, and what the memory consists of.

    The sweep covers every catalog GPU at many counts; the verdict shows the GPU types on offer
    (``offered_gpus``; all when empty) and single-node counts, with the fewest GPUs that fit beyond.
    """

    rows: list[MemoryFitRow] = Field(default_factory=list)
    offered_gpus: list[str] = Field(default_factory=list)
    bars: list[MemoryBar] = Field(default_factory=list)
    capacities: list[GpuCapacity] = Field(default_factory=list)
    breakdown_note: str | None = None
    planning_margin: float | None = Field(default=None, description="fraction of the card kept free")
    computed_at: dt.datetime | None = None
    band_note: str | None = None

    @property
    def shown_rows(self) -> list[MemoryFitRow]:
        if not self.offered_gpus:
            return list(self.rows)
        offered = set(self.offered_gpus)
        return [row for row in self.rows if row.gpu in offered]

    @property
    def omitted_gpu_types(self) -> int:
        return len({r.gpu for r in self.rows} - {r.gpu for r in self.shown_rows})

    @property
    def fitting(self) -> list[MemoryFitRow]:
        """Setups that fit in GPU memory (CPU offload left out)."""
        return [row for row in self.shown_rows if row.fits_on_gpu]

    @property
    def offload_only_gpu_types(self) -> list[str]:
        """GPU types that hold the workload only by offloading to CPU memory."""
        return sorted({r.gpu for r in self.shown_rows if r.fits and r.offload} - set(self.fitting_gpu_types))

    @property
    def gpu_types(self) -> list[str]:
        return sorted({row.gpu for row in self.shown_rows})

    @property
    def fitting_gpu_types(self) -> list[str]:
        return sorted({row.gpu for row in self.fitting})

    @property
    def single_gpu_types(self) -> list[str]:
        """GPU types that hold the workload on one card."""
        return sorted({row.gpu for row in self.fitting if row.gpu_count == 1})

    @property
    def smallest(self) -> MemoryFitRow | None:
        """The fewest GPUs that fit (simplest sharding, then the smallest card)."""
        return min(
            self.fitting,
            key=lambda r: (r.gpu_count, sharding_rank(r.sharding), r.gpu_memory_gb, r.gpu),
            default=None,
        )

    @property
    def counts(self) -> list[int]:
        return sorted({row.gpu_count for row in self.shown_rows if row.gpu_count <= GPUS_PER_NODE})

    @property
    def matrix(self) -> list[VerdictRow]:
        """GPU types (smallest memory first) by GPU count."""
        counts = self.counts
        by_gpu: dict[str, list[MemoryFitRow]] = {}
        for row in self.shown_rows:
            by_gpu.setdefault(row.gpu, []).append(row)
        result = []
        for gpu, rows in by_gpu.items():
            cells: list[MemoryFitRow | None] = []
            for count in counts:
                options = [r for r in rows if r.gpu_count == count]
                cells.append(min(options, key=_cell_preference) if options else None)
            fitting = [r for r in rows if r.fits_on_gpu]
            fewest = min(fitting, key=lambda r: (r.gpu_count, _cell_preference(r)), default=None)
            result.append(
                VerdictRow(
                    gpu=gpu, gpu_memory_gb=max(r.gpu_memory_gb for r in rows), cells=cells, fewest=fewest
                )
            )
        return sorted(result, key=lambda v: (v.gpu_memory_gb, v.gpu))


def _cell_preference(row: MemoryFitRow) -> tuple:
    # A fit in GPU memory beats a tight fit (the peak fits, the margin does not: still ranked),
    # which beats a fit by CPU offload, which beats a miss. Among fits: the flagged least-complex
    # setup, the simplest sharding, most headroom. Among the others: the nearest one.
    if row.fits_on_gpu:
        return (0, not row.least_complex, sharding_rank(row.sharding), -row.headroom_gb)
    if row.verdict_word == "tight" and not row.offload:
        return (1, sharding_rank(row.sharding), -row.headroom_gb)
    if row.fits:
        return (2, -row.headroom_gb)
    return (3, row.offload, -row.headroom_gb)
