"""Per-run cost of every (workload, offer) pair: the configuration's hours at the offer's price.

Exists as the one step where the price enters: everything before is per configuration (price-free),
everything after (order, warnings, output) reads these arrays. Each pair's cost terms come from
models/cost.py through WorkloadTable.costs, and its broken limits from limits.py.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from gpuprice.models.ranking.configurations import Configs
from gpuprice.models.ranking.join import Pairs
from gpuprice.models.ranking.limits import CONSTRAINTS, LIMITS, exclusions
from gpuprice.models.ranking.offers import Offers
from gpuprice.models.ranking.workload_table import WorkloadTable
from gpuprice.warehouse.staleness import PRICE_AGE


@dataclass(frozen=True)
class PricedPairs:
    """(workload, offer) pairs with their configuration's facts and cost; one element per pair."""

    workload: np.ndarray  # index into WorkloadTable
    offer: np.ndarray  # index into Offers
    config: np.ndarray  # index into Configs
    gpus: np.ndarray  # GPUs in the job (float, as the cost model takes them)
    nodes: np.ndarray
    hours: np.ndarray  # compute hours
    price: np.ndarray  # USD per GPU-hour
    spot: np.ndarray
    community: np.ndarray
    spot_rate: np.ndarray  # measured preemptions per node-hour; NaN: the workload's assumption
    checkpoints: np.ndarray
    costs: dict[str, np.ndarray]  # every cost term (models.cost.checkpoint_costs)
    broken: np.ndarray  # one column per CONSTRAINTS code: True where the pair breaks that limit

    def take(self, index: np.ndarray) -> PricedPairs:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return PricedPairs(
            **{name: v[index] for name, v in values.items() if name != "costs"},
            costs={name: v[index] for name, v in self.costs.items()},
        )

    def __len__(self) -> int:
        return len(self.offer)

    @property
    def too_old(self) -> np.ndarray:
        """The price is not current (its page is older than the price-age limit)."""
        return self.broken[:, CONSTRAINTS.index(PRICE_AGE)]

    @property
    def infeasible(self) -> np.ndarray:
        """The pair breaks one of the job's LIMITS."""
        return np.asarray(self.broken[:, : len(LIMITS)].any(axis=1), dtype=bool)


def price_pairs(
    pairs: Pairs, offers: Offers, configs: Configs, workloads: WorkloadTable, max_age_days: int
) -> PricedPairs:
    gpus = configs.gpus[pairs.config].astype(float)
    nodes = configs.nodes[pairs.config].astype(float)
    hours = configs.hours[pairs.config]
    price, spot, community = (
        offers.price[pairs.offer],
        offers.spot[pairs.offer],
        offers.community[pairs.offer],
    )
    spot_rate = offers.spot_rate[pairs.offer]
    checkpoints, costs = workloads.costs(
        pairs.workload,
        gpus=gpus,
        nodes=nodes,
        price=price,
        hours=hours,
        spot=spot,
        community=community,
        spot_rate=spot_rate,
    )
    too_old = offers.age[pairs.offer] > max_age_days
    return PricedPairs(
        workload=pairs.workload,
        offer=pairs.offer,
        config=pairs.config,
        gpus=gpus,
        nodes=nodes,
        hours=hours,
        price=price,
        spot=spot,
        community=community,
        spot_rate=spot_rate,
        checkpoints=checkpoints,
        costs=costs,
        broken=exclusions(workloads, pairs.workload, gpus, nodes, costs, too_old),
    )
