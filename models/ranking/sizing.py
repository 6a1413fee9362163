"""How many GPUs and nodes a job gets: right-sized hours and the node count per interruption class.

Exists because more GPUs do not shorten a run linearly, and because the node count of a scale-out
job depends on the deadline and on how often its capacity is interrupted: both are rules a reader
will want to check on their own, apart from the array plumbing around them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gpuprice.models.ranking.offers import risk_is_community, risk_is_spot
from gpuprice.models.ranking.workload_table import WorkloadTable

if TYPE_CHECKING:
    from gpuprice.models.ranking.configurations import Configs

# Data-parallel scaling beyond the fewest GPUs that hold a job is at best ~90% of linear in practice
# (gradient all-reduce, stragglers, input pipeline; e.g. PyTorch DDP, Li et al., VLDB 2020, reports
# near- but sub-linear scaling): an assumption used as a cap on top of the throughput model's
# communication estimate.
DATA_PARALLEL_EFFICIENCY = 0.90
# Splitting a job further stops paying once it is about an hour long: start-up, data loading,
# evaluation and checkpoint writes are serial time of that order that more GPUs do not shrink.
MIN_USEFUL_RUN_HOURS = 1.0


def job_card(workload: np.ndarray, card: np.ndarray, n_cards: int) -> np.ndarray:
    """One code per (workload, card) pair: one job on one GPU type, the group sizes compete in."""
    return workload * n_cards + card


def right_sized_hours(
    tokens: np.ndarray, group: np.ndarray, gpus: np.ndarray, tps: np.ndarray, mfu: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(compute hours, effective tokens/s per GPU, effective MFU) of each configuration.

    Within a group (one job on one GPU type) the configuration with the fewest GPUs is the
    baseline. More GPUs shorten the run at most at DATA_PARALLEL_EFFICIENCY of linear scaling
    (the throughput model's own communication estimate applies when it is worse), and never below
    MIN_USEFUL_RUN_HOURS (or the baseline's own length when shorter): past that point the extra
    GPUs idle, and are paid for.
    """
    order = np.lexsort((gpus, group))
    starts, first = np.unique(group[order], return_index=True)
    base = order[first][np.searchsorted(starts, group)]
    base_rate = tps[base] * gpus[base]
    stated = np.where(gpus > gpus[base], base_rate * DATA_PARALLEL_EFFICIENCY * gpus / gpus[base], base_rate)
    rate = np.minimum(tps * gpus, stated)  # cluster tokens/s
    busy = tokens / (rate * 3600.0)
    floor = np.minimum(tokens / (base_rate * 3600.0), MIN_USEFUL_RUN_HOURS)
    hours = np.where(gpus > gpus[base], np.maximum(busy, floor), busy)
    effective = tokens / (hours * 3600.0 * gpus)
    return hours, effective, mfu * effective / tps


def choose_nodes(
    configs: Configs, candidates: np.ndarray, workloads: WorkloadTable, risk: int, n_cards: int
) -> np.ndarray:
    """Per (workload, card) among ``candidates``: the fewest nodes whose expected wall time (start-up
    and interruptions of this class included) meets the deadline, else the fastest."""
    if candidates.size == 0:
        return candidates
    c = configs.take(candidates)
    _, costs = workloads.costs(
        c.workload,
        gpus=c.gpus,
        nodes=c.nodes,
        price=np.zeros(len(c)),
        hours=c.hours,
        spot=np.full(len(c), risk_is_spot(risk)),
        community=np.full(len(c), risk_is_community(risk)),
    )
    wall = costs["wall_hours"]
    late = wall > workloads.deadline[c.workload]  # False when there is no deadline (NaN)
    group = job_card(c.workload, c.card, n_cards)
    # Within a group: on-time ones first by GPU count; late ones after, fastest first.
    order = np.lexsort((np.where(late, wall, c.gpus), late, group))
    _, first = np.unique(group[order], return_index=True)
    return candidates[order[first]]
