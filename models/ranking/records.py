"""The ranking's output: exactly RANKING_COLUMNS, one row per ranked (workload, offer).

Exists so that the columns the CLI, the reports and the warehouse's rankings table read are
listed and filled in one place.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from gpuprice.models.ranking.bands import BAND_COLUMNS, band_columns
from gpuprice.models.ranking.configurations import Configs
from gpuprice.models.ranking.cost_terms import cost_terms_json
from gpuprice.models.ranking.limits import excluded_by
from gpuprice.models.ranking.offers import Offers
from gpuprice.models.ranking.order import rank_numbers
from gpuprice.models.ranking.priced import PricedPairs
from gpuprice.models.ranking.situations import situations
from gpuprice.models.ranking.warnings import row_warnings
from gpuprice.models.ranking.workload_table import WorkloadTable
from gpuprice.models.spot_risk import rate_source

RANKING_COLUMNS: tuple[str, ...] = (
    "snapshot_date",
    "workload",
    "rank",
    "provider",
    "sku",
    "gpu",
    "gpu_count",
    "nodes",
    "tier",
    "community",
    "commitment_months",
    "price_basis",
    "usd_per_gpu_hour",
    "sharding",
    "per_gpu_gb",
    "verdict",
    "headroom_gb",
    "band_low_gb",
    "band_high_gb",
    "tokens_per_sec_per_gpu",
    "mfu",
    "hours",
    "run_cost_usd",
    "total_cost_usd",
    "cost_per_checkpoint_usd",
    "cost_terms",
    "warnings",
    "price_snapshot_date",
    "observed_on",
    "price_age_days",
    "excluded_by",
    "region",
    "preemption_rate_per_node_hour",
    "preemption_rate_source",
    *BAND_COLUMNS,
)


def empty_ranking() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in RANKING_COLUMNS})


def _band_columns(
    workloads: WorkloadTable, workload: np.ndarray, per_gpu_gb: np.ndarray
) -> dict[str, np.ndarray]:
    """The out-of-sample error band around each row's predicted peak (models/memory_band.py)."""
    from gpuprice.models.memory_band import band_of

    bands = [band_of(w.method) for w in workloads.items]
    low = np.array([b.low for b in bands], dtype=np.float64)[workload]
    high = np.array([b.high for b in bands], dtype=np.float64)[workload]
    return {"band_low_gb": per_gpu_gb * (1 + low), "band_high_gb": per_gpu_gb * (1 + high)}


def _preemption_columns(
    workloads: WorkloadTable, ranked: PricedPairs, buckets: np.ndarray
) -> dict[str, object]:
    """Per row: the spot preemption rate the cost used and where it came from (None off spot)."""
    default = np.array([w.cost_terms.spot_preemptions_per_node_hour for w in workloads.items], dtype=float)
    used = np.where(np.isnan(ranked.spot_rate), default[ranked.workload], ranked.spot_rate)
    source = [
        (rate_source(b if isinstance(b, str) else None) if s else None)
        for s, b in zip(ranked.spot.tolist(), buckets.tolist(), strict=True)
    ]
    return {
        "preemption_rate_per_node_hour": np.where(ranked.spot, used, np.nan),
        "preemption_rate_source": np.array(source, dtype=object),
    }


def ranking_frame(
    ranked: PricedPairs,
    offers: Offers,
    configs: Configs,
    workloads: WorkloadTable,
    *,
    day: dt.date,
    stale: frozenset[str],
    max_age_days: int,
) -> pd.DataFrame:
    """The output rows of pairs already in ranking order."""
    shared = situations(ranked, len(configs))
    excluded = excluded_by(ranked.broken)
    warnings = row_warnings(
        ranked, shared, offers, configs, workloads, excluded, day=day, stale=stale, max_age_days=max_age_days
    )
    offer, config, costs = ranked.offer, ranked.config, ranked.costs
    cols = {name: values[offer] for name, values in offers.columns.items()}
    names = np.array([w.name for w in workloads.items], dtype=object)
    price_dates = np.array([d for _, d in offers.provider_dates], dtype=object)
    return pd.DataFrame(
        {
            "snapshot_date": np.full(len(ranked), day, dtype=object),
            "workload": names[ranked.workload],
            "rank": rank_numbers(ranked.workload, len(workloads)),
            "provider": cols["provider"],
            "sku": cols["sku"],
            "gpu": cols["gpu"],
            "gpu_count": ranked.gpus.astype(np.int64),
            "nodes": ranked.nodes.astype(np.int64),
            "tier": cols["tier"],
            "community": ranked.community,
            "commitment_months": pd.array(cols["commitment_months"], dtype="Int64"),
            "price_basis": cols["price_basis"],
            "usd_per_gpu_hour": ranked.price,
            "sharding": configs.sharding[config],
            "per_gpu_gb": configs.per_gpu_gb[config],
            "verdict": configs.verdict[config],
            "headroom_gb": configs.headroom_gb[config],
            **_band_columns(workloads, ranked.workload, configs.per_gpu_gb[config]),
            "tokens_per_sec_per_gpu": configs.tokens_per_sec_per_gpu[config],
            "mfu": configs.mfu[config],
            "hours": ranked.hours,
            "run_cost_usd": np.round(costs["gpu_usd"], 2),
            "total_cost_usd": np.round(costs["total_usd"], 2),
            "cost_per_checkpoint_usd": costs["cost_per_checkpoint_usd"],
            "cost_terms": cost_terms_json(workloads, ranked, shared),
            "warnings": warnings,
            "price_snapshot_date": price_dates[offers.provider_date[offer]],
            "observed_on": cols["observed_on"],
            "price_age_days": offers.age[offer],
            "excluded_by": excluded,
            "region": cols["region"],
            **_preemption_columns(workloads, ranked, cols["bucket"]),
            **band_columns(ranked, cols["gpu"], workloads),
        },
        columns=list(RANKING_COLUMNS),
    )
