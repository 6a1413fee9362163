"""The throughput error band of each ranked offer, as hours and total cost.

Exists so that the ranking's band columns come from the one band rule (models/throughput_band.py:
per method, widened on GPUs that borrow an efficiency) and from the one cost model: the compute
hours at the band's fast and slow ends are costed again term by term (GPU time, start-up, rework,
storage, ...), so ``total_cost_low_usd``/``total_cost_high_usd`` bracket ``total_cost_usd``.
"""

from __future__ import annotations

import numpy as np

from gpuprice.models.ranking.priced import PricedPairs
from gpuprice.models.ranking.workload_table import WorkloadTable
from gpuprice.models.throughput_band import gpu_speed_band

BAND_COLUMNS: tuple[str, ...] = ("hours_low", "hours_high", "total_cost_low_usd", "total_cost_high_usd")


def hour_factors(methods: np.ndarray, gpus: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, (short, long) multipliers of the predicted hours for that method on that GPU."""
    short = np.empty(len(methods), dtype=np.float64)
    long = np.empty(len(methods), dtype=np.float64)
    for i, (method, gpu) in enumerate(zip(methods.tolist(), gpus.tolist(), strict=True)):
        short[i], long[i] = gpu_speed_band(method, gpu).hours(1.0)
    return short, long


def band_columns(ranked: PricedPairs, gpu: np.ndarray, workloads: WorkloadTable) -> dict[str, np.ndarray]:
    """BAND_COLUMNS for the ranked pairs (``gpu``: each pair's GPU slug)."""
    methods = np.array([w.method for w in workloads.items], dtype=object)[ranked.workload]
    short, long = hour_factors(methods, np.asarray(gpu, dtype=object))
    columns: dict[str, np.ndarray] = {"hours_low": ranked.hours * short, "hours_high": ranked.hours * long}
    for end, hours in (("low", columns["hours_low"]), ("high", columns["hours_high"])):
        _, costs = workloads.costs(
            ranked.workload,
            gpus=ranked.gpus,
            nodes=ranked.nodes,
            price=ranked.price,
            hours=hours,
            spot=ranked.spot,
            community=ranked.community,
            spot_rate=ranked.spot_rate,
        )
        columns[f"total_cost_{end}_usd"] = np.round(costs["total_usd"], 2)
    return columns
