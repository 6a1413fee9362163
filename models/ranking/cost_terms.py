"""The ``cost_terms`` JSON of each ranked row: every cost term, the hours and the assumptions.

Exists because this column is written for every row of every ranking (tens of thousands): the
price-independent part is formatted once per situation and the per-row amounts are one f-string,
and reports/costs.py reads the keys written here.
"""

from __future__ import annotations

import numpy as np

from gpuprice.models.ranking.priced import PricedPairs
from gpuprice.models.ranking.situations import Situations
from gpuprice.models.ranking.workload_table import WorkloadTable

_SUFFIX_VALUES = (
    "storage_usd",
    "data_usd",
    "engineer_usd",
    "reusable_value_usd",
    "orchestration_hours",
    "rework_hours",
    "wall_hours",
    "expected_interruptions",
)


def _suffixes(workloads: WorkloadTable, ranked: PricedPairs, rows: np.ndarray) -> list[str]:
    """The price-independent part of each situation's cost_terms JSON (after the per-row amounts).

    Kept short on purpose: it is repeated on every row. The assumptions behind the numbers are the
    workload's cost terms (``gpuprice workloads --json``); only its overrides are repeated here.
    """
    v = {name: ranked.costs[name][rows].tolist() for name in _SUFFIX_VALUES}
    out = []
    pairs = zip(ranked.workload[rows].tolist(), ranked.checkpoints[rows].tolist(), strict=True)
    for i, (w, count) in enumerate(pairs):
        compute = v["wall_hours"][i] - v["orchestration_hours"][i] - v["rework_hours"][i]
        out.append(
            f',"storage_usd":{v["storage_usd"][i]:.2f},"data_usd":{v["data_usd"][i]:.2f}'
            f',"engineer_usd":{v["engineer_usd"][i]:.2f},"reusable_value_usd":{v["reusable_value_usd"][i]:.2f}'
            f',"checkpoints":{int(count)},"compute_hours":{compute:.4f}'
            f',"orchestration_hours":{v["orchestration_hours"][i]:.4f},"rework_hours":{v["rework_hours"][i]:.4f}'
            f',"wall_hours":{v["wall_hours"][i]:.4f},"expected_interruptions":{v["expected_interruptions"][i]:.4g}'
            f',"checkpoint_gb":{workloads.checkpoint_gb[w]:.3f},"dataset_gb":{workloads.dataset_gb[w]:.3f}'
            f',"model_download_gb":{workloads.model_gb[w]:.3f},"assumptions":{workloads.assumptions_json[w]}}}'
        )
    return out


def cost_terms_json(workloads: WorkloadTable, ranked: PricedPairs, situations: Situations) -> list[str]:
    """Per row: the price-dependent amounts, then the situation's fixed part.

    One f-string per row produces the final str objects directly (faster than building numpy
    string arrays and converting them to objects)."""
    suffixes = _suffixes(workloads, ranked, situations.first_row)
    costs = ranked.costs
    columns = zip(
        costs["gpu_usd"].tolist(),
        costs["orchestration_usd"].tolist(),
        costs["rework_usd"].tolist(),
        costs["total_usd"].tolist(),
        situations.of_row.tolist(),
        strict=True,
    )
    return [
        f'{{"gpu_usd":{g:.2f},"orchestration_usd":{o:.2f},"rework_usd":{r:.2f},"total_usd":{t:.2f}{suffixes[s]}'
        for g, o, r, t, s in columns
    ]
