"""The offer x configuration join: which configuration each (workload, offer) pair runs as.

Exists because the join is the one step whose size is workloads x offers: an offer runs as the
configuration of the same workload, card, GPUs per offer and interruption class. The join is a
lookup table with one axis per key field, filled with configuration numbers, then read at every
offer's key for every workload at once: no per-pair Python, and the key stays four named axes.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from gpuprice.models.ranking.configurations import Configs
from gpuprice.models.ranking.offers import RISKS, Offers
from gpuprice.models.ranking.workload_table import WorkloadTable


@dataclass(frozen=True)
class Pairs:
    """(workload, offer) pairs with the configuration each runs as; indexes, one element per pair."""

    workload: np.ndarray  # index into WorkloadTable
    offer: np.ndarray  # index into Offers
    config: np.ndarray  # index into Configs

    def take(self, index: np.ndarray) -> Pairs:
        return Pairs(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    def __len__(self) -> int:
        return len(self.offer)


def match(offers: Offers, configs: Configs, n_workloads: int) -> Pairs:
    """Every (workload, offer) pair that has a configuration, workload by workload in offer order."""
    counts = np.union1d(offers.gpu_count, configs.offer_gpu_count)  # the GPU-count axis' values
    config_at = np.full((n_workloads, len(offers.cards), len(counts), len(RISKS)), -1, dtype=np.int64)
    config_at[
        configs.workload,
        configs.card,
        np.searchsorted(counts, configs.offer_gpu_count),
        configs.risk,
    ] = np.arange(len(configs))
    # One row per workload, one column per offer: the configuration at the offer's key, or -1.
    found = config_at[:, offers.card, np.searchsorted(counts, offers.gpu_count), offers.risk]
    workload, offer = np.nonzero(found >= 0)
    return Pairs(workload=workload, offer=offer, config=found[workload, offer])


def considered(offers: Offers, workloads: WorkloadTable, pairs: Pairs) -> np.ndarray:
    """Pairs whose offer is of a tier and provider the workload considers (``tier``, ``providers``)."""
    keep = np.ones(len(pairs), dtype=bool)
    for index, workload in enumerate(workloads.items):
        mine = pairs.workload == index
        if workload.tier is not None:
            keep[mine] &= np.isin(offers.columns["tier"][pairs.offer[mine]], list(workload.tier))
        if workload.providers is not None:
            keep[mine] &= np.isin(offers.columns["provider"][pairs.offer[mine]], list(workload.providers))
    return keep
