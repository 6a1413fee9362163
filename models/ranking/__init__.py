"""Rank the day's offers for each workload by cost per successful checkpoint.

For every offer x workload the configuration is the offer itself (its ``gpu_count`` GPUs: providers
sell multi-GPU machines in fixed sizes) or, for offers of whole 8-GPU nodes and workloads allowed
to scale out (``max_nodes > 1``), N such nodes. The memory model picks the least complex sharding
that fits (none, ZeRO-2, ZeRO-3); the throughput model gives tokens/s; the cost model gives hours,
run cost and the cost per checkpoint with each term in ``cost_terms``. Node count: the smallest N
in [min_nodes, max_nodes] that fits and whose expected wall time (start-up and interruptions of the
offer's tier included) meets the deadline; the fastest fitting N when none does.

Everything that does not depend on the price (memory fit, throughput, hours, warnings) is computed
once per distinct configuration and joined to the offers, so the per-offer work is a handful of
numpy passes. The modules, in the order rank_offers (rank.py) uses them:

- ``offers``: which offers can rank, as arrays (cards, price age, interruption class)
- ``workload_table``: the workloads as arrays; the cost model's call
- ``configurations`` + ``sizing``: price-free facts per (workload, card, GPUs per offer, class)
- ``join``: which configuration each (workload, offer) runs as
- ``priced`` + ``limits``: per-run cost at the offer's price; the limits each pair breaks
- ``order``: the sort key and its tie-breaks
- ``records`` + ``situations`` + ``warnings`` + ``cost_terms``: the output rows
"""

from gpuprice.models.ranking.configurations import STRATEGIES
from gpuprice.models.ranking.limits import CONSTRAINTS, LIMITS
from gpuprice.models.ranking.offers import REQUIRED_OFFER_COLUMNS, RISKS
from gpuprice.models.ranking.rank import rank_offers
from gpuprice.models.ranking.records import RANKING_COLUMNS
from gpuprice.models.ranking.sizing import DATA_PARALLEL_EFFICIENCY, MIN_USEFUL_RUN_HOURS
from gpuprice.models.ranking.warnings import LONG_JOB_HOURS
from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS, PRICE_AGE, STALE_AFTER_DAYS

__all__ = [
    "CONSTRAINTS",
    "DATA_PARALLEL_EFFICIENCY",
    "LIMITS",
    "LONG_JOB_HOURS",
    "MAX_PRICE_AGE_DAYS",
    "MIN_USEFUL_RUN_HOURS",
    "PRICE_AGE",
    "RANKING_COLUMNS",
    "REQUIRED_OFFER_COLUMNS",
    "RISKS",
    "STALE_AFTER_DAYS",
    "STRATEGIES",
    "rank_offers",
]
