"""The job's limits and which (workload, offer) pairs break them: ``excluded_by``.

Exists so that each limit (deadline, GPUs, nodes, budget, price age) is named and tested in one
place, and the names the CLI accepts and prints (``LIMITS``, ``CONSTRAINTS``) are the ones the
ranking computes.
"""

from __future__ import annotations

import numpy as np

from gpuprice.models.ranking.workload_table import WorkloadTable
from gpuprice.warehouse.staleness import PRICE_AGE

# Constraint codes of ``excluded_by`` (which limit an offer breaks). ``price_age``: the price is
# not current (its page is older than the price-age limit, warehouse/staleness.py); such offers
# are never recommended and are kept only when asked for (``include_stale``), after the others.
LIMITS: tuple[str, ...] = ("deadline", "max_gpus", "max_nodes", "budget")
CONSTRAINTS: tuple[str, ...] = (*LIMITS, PRICE_AGE)


def exclusions(
    workloads: WorkloadTable,
    workload: np.ndarray,
    gpus: np.ndarray,
    nodes: np.ndarray,
    costs: dict[str, np.ndarray],
    too_old: np.ndarray,
) -> np.ndarray:
    """One column per CONSTRAINTS code: True where the pair breaks that limit."""
    with np.errstate(invalid="ignore"):
        return np.column_stack(
            [
                costs["wall_hours"] > workloads.deadline[workload],  # NaN deadline: never late
                gpus > workloads.max_gpus[workload],
                nodes > workloads.max_nodes[workload],
                costs["total_usd"] > workloads.budget[workload],
                too_old,
            ]
        )


def excluded_by(broken: np.ndarray) -> list[list[str]]:
    """Per row of an ``exclusions`` matrix, the CONSTRAINTS codes it breaks (a list per row)."""
    flags = (2,) * len(CONSTRAINTS)  # each row's pattern of broken limits as one number
    pattern = np.ravel_multi_index(tuple(broken.T.astype(np.intp)), flags)
    names = {
        p: [c for c, hit in zip(CONSTRAINTS, np.unravel_index(p, flags)) if hit]
        for p in np.unique(pattern).tolist()
    }
    return [list(names[p]) for p in pattern.tolist()]
