"""rank_offers: the ranking's one entry point, the steps in order.

Exists so that the whole pipeline of the ranking reads as one short function: usable offers
(offers.py) -> workload table (workload_table.py) -> price-free configurations
(configurations.py, sizing.py) -> the offer x configuration join (join.py) -> per-run cost
(priced.py, limits.py) -> order (order.py) -> output rows (records.py, warnings.py, cost_terms.py).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from gpuprice.models.ranking.configurations import configurations
from gpuprice.models.ranking.join import considered, match
from gpuprice.models.ranking.offers import as_date, usable_offers
from gpuprice.models.ranking.order import rank_numbers, ranking_order
from gpuprice.models.ranking.priced import price_pairs
from gpuprice.models.ranking.records import empty_ranking, ranking_frame
from gpuprice.models.ranking.workload_table import WorkloadTable
from gpuprice.models.workloads import Workload
from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS


def rank_offers(
    offers: pd.DataFrame,
    workloads: list[Workload],
    snapshot_date: dt.date | str,
    *,
    stale_providers: set[str] | frozenset[str] = frozenset(),
    max_gpus: int = 512,
    include_infeasible: bool = False,
    max_price_age_days: int = MAX_PRICE_AGE_DAYS,
    include_stale: bool = False,
    top: int | None = None,
) -> pd.DataFrame:
    """Every fitting offer x workload, ranked per workload by cost per checkpoint (ties: wall time).

    ``offers`` is ``warehouse.queries.offers_as_of``'s frame (the ``price_snapshots`` columns the
    ranking reads, each offer once, at its cheapest region: every row given is ranked as an offer
    of its own); offers with GPU ``unknown`` (or not in the catalog), without a positive price or
    with a scheduled future price are skipped. Returns
    exactly RANKING_COLUMNS, workloads in the given order; ``warnings`` holds one list of
    "code: text" strings per row. Offers beyond a workload's limits (deadline, GPUs, nodes,
    budget) are left out, or with ``include_infeasible`` ranked after the others with the
    CONSTRAINTS they break in ``excluded_by``; offers of tiers or providers the workload does not
    consider are always left out. Offers whose price is not current (page more than
    ``max_price_age_days`` before the date) are left out, or with ``include_stale`` ranked after
    every current offer with ``price_age`` in ``excluded_by`` and a ``stale-price`` warning;
    ``price_age_days`` is each price's age. ``top``: only the first ``top`` rows of each workload
    (1: its best offer), the whole ranking's first rows; only their output rows are built (the
    warnings, cost terms and bands of every row are most of a long ranking's time).
    """
    day = as_date(snapshot_date)
    if day is None:
        raise ValueError("rank_offers needs a snapshot_date")
    if top is not None and top < 1:
        raise ValueError(f"rank_offers: top must be at least 1, not {top}")
    if offers.empty or not workloads:
        return empty_ranking()
    usable = usable_offers(offers, day)
    if len(usable) == 0:
        return empty_ranking()
    table = WorkloadTable.of(workloads)
    configs = configurations(table, usable.cards, np.unique(usable.gpu_count).tolist(), max_gpus)
    if configs is None:
        return empty_ranking()
    pairs = match(usable, configs, len(table))
    pairs = pairs.take(considered(usable, table, pairs))
    if len(pairs) == 0:
        return empty_ranking()
    priced = price_pairs(pairs, usable, configs, table, max_price_age_days)
    order = ranking_order(priced, table, include_infeasible=include_infeasible, include_stale=include_stale)
    if top is not None:
        order = order[rank_numbers(priced.workload[order], len(table)) <= top]
    if order.size == 0:
        return empty_ranking()
    return ranking_frame(
        priced.take(order),
        usable,
        configs,
        table,
        day=day,
        stale=frozenset(stale_providers),
        max_age_days=max_price_age_days,
    )
