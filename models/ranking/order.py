"""The order of the ranking and its tie-breaks, and the rank numbers.

Exists so that the answer to "why is this offer above that one" is one sort key, read top to
bottom: per workload (in the given order), current offers within every limit first, then current
offers beyond a limit, then offers whose price is not current; within each, the guide's risk rule,
then cheapest per checkpoint; ties by expected wall time, then the offers' own order (offers_as_of
sorts by provider, SKU, count, tier).
"""

from __future__ import annotations

import numpy as np

from gpuprice.models.ranking.priced import PricedPairs
from gpuprice.models.ranking.workload_table import WorkloadTable

# Seed guide, common mistake 4: spot is dangerous for long full fine-tunes. Every spot offer pays
# the expected rework at CostTerms.spot_preemptions_per_node_hour (default 0.05: one preemption
# per ~20 node-hours, an assumption); a full fine-tune longer than the workload's long_run_hours
# (default 8 h) on spot or community capacity gets the spot-long-run warning (warnings.py) and,
# unless the workload declares checkpointing: proven, ranks after reserved and on-demand offers.


def demoted(priced: PricedPairs, workloads: WorkloadTable) -> np.ndarray:
    """The guide's risk rule: a long full fine-tune / pretraining run without proven checkpointing
    ranks interruptible capacity (spot, community) after reserved and on-demand offers."""
    interruptible = priced.spot | priced.community
    long_run = priced.costs["wall_hours"] > workloads.long_hours[priced.workload]
    return interruptible & workloads.risk_rule[priced.workload] & long_run


def ranking_order(
    priced: PricedPairs, workloads: WorkloadTable, *, include_infeasible: bool, include_stale: bool
) -> np.ndarray:
    """Indexes of the pairs in ranking order; pairs beyond a limit or not current are dropped
    unless asked for."""
    infeasible, too_old = priced.infeasible, priced.too_old
    order = np.lexsort(
        (  # last key first: np.lexsort sorts by the last key, then the one before, ...
            priced.offer,
            priced.costs["wall_hours"],
            np.round(priced.costs["cost_per_checkpoint_usd"], 6),
            demoted(priced, workloads),
            infeasible,
            too_old,
            priced.workload,
        )
    )
    if not include_infeasible:
        order = order[~infeasible[order]]
    if not include_stale:
        order = order[~too_old[order]]
    return order


def rank_numbers(workload: np.ndarray, n_workloads: int) -> np.ndarray:
    """1, 2, ... within each workload of rows already in ranking order."""
    starts = np.searchsorted(workload, np.arange(n_workloads))
    return np.arange(len(workload), dtype=np.int64) - starts[workload] + 1
