"""Rank the day's offers for each workload by cost per successful checkpoint.

For every offer x workload the configuration is the offer itself (its ``gpu_count`` GPUs: providers
sell multi-GPU machines in fixed sizes) or, for offers of whole 8-GPU nodes and workloads allowed
to scale out (``max_nodes > 1``), N such nodes. The memory model picks the least complex sharding
that fits (none, ZeRO-2, ZeRO-3); the throughput model gives tokens/s; the cost model gives hours,
run cost and the cost per checkpoint with each term in ``cost_terms``. Node count: the smallest N
in [min_nodes, max_nodes] that fits and whose expected wall time (start-up and interruptions of the
offer's tier included) meets the deadline; the fastest fitting N when none does.

Everything that does not depend on the price (memory fit, throughput, hours, warnings) is computed
once per distinct (GPU, memory, GPU count) configuration and broadcast to the offers through integer
codes, so the per-offer work is a handful of numpy passes.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from gpuprice.models.choices import GPUS_PER_NODE, SWEEP_STRATEGIES
from gpuprice.models.cost import CostTermArrays, checkpoint_costs
from gpuprice.models.spot_risk import bucket_rate, rate_source
from gpuprice.models.throughput import (
    PCIE_BUSBW_GBS,
    ModelShape,
    compiled_kernels,
    gpu_profile,
    intra_node_busbw_gbs,
    predict_columns,
)
from gpuprice.models.workloads import Workload
from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS, PRICE_AGE, STALE_AFTER_DAYS, age_days

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
)
REQUIRED_OFFER_COLUMNS: tuple[str, ...] = (
    "provider",
    "sku",
    "gpu",
    "gpu_count",
    "tier",
    "community",
    "usd_per_gpu_hour",
)
_OFFER_COLUMNS_USED = frozenset(
    {
        *REQUIRED_OFFER_COLUMNS,
        "snapshot_date",
        "observed_on",
        "vram_gb",
        "commitment_months",
        "price_basis",
        "effective_from",
        "region",
        "interruption_bucket",
    }
)
# Fields that tell one offer's regions apart: the ranking keeps each offer's cheapest region.
_REGION_PEERS: tuple[str, ...] = (
    "provider",
    "sku",
    "gpu",
    "gpu_count",
    "tier",
    "community",
    "commitment_months",
    "price_basis",
)
STRATEGIES = tuple(s for s in SWEEP_STRATEGIES if s != "offload")  # CPU offload's speed is not modelled
RISKS: tuple[int, ...] = (0, 1, 2, 3)  # 2 x spot + community: the interruption classes of offers
LONG_JOB_HOURS = 24.0  # "long job" for the no-ECC warning
# Seed guide, common mistake 4: spot is dangerous for long full fine-tunes. Every spot offer pays
# the expected rework at CostTerms.spot_preemptions_per_node_hour (default 0.05: one preemption
# per ~20 node-hours, an assumption); a full fine-tune longer than the workload's long_run_hours
# (default 8 h) on spot or community capacity gets the spot-long-run warning and, unless the
# workload declares checkpointing: proven, ranks after reserved and on-demand offers.
# Right-sizing (models.ranking._right_sized_hours). Data-parallel scaling beyond the fewest GPUs
# that hold a job is at best ~90% of linear in practice (gradient all-reduce, stragglers, input
# pipeline; e.g. PyTorch DDP, Li et al., VLDB 2020, reports near- but sub-linear scaling): an
# assumption used as a cap on top of the throughput model's communication estimate.
DATA_PARALLEL_EFFICIENCY = 0.90
# Splitting a job further stops paying once it is about an hour long: start-up, data loading,
# evaluation and checkpoint writes are serial time of that order that more GPUs do not shrink.
MIN_USEFUL_RUN_HOURS = 1.0
# Constraint codes of ``excluded_by`` (which limit an offer breaks). ``price_age``: the price is
# not current (its page is older than the price-age limit, warehouse/staleness.py); such offers
# are never recommended and are kept only when asked for (``include_stale``), after the others.
LIMITS: tuple[str, ...] = ("deadline", "max_gpus", "max_nodes", "budget")
CONSTRAINTS: tuple[str, ...] = (*LIMITS, PRICE_AGE)


@dataclass(frozen=True)
class _Offers:
    """The usable offers as arrays, with integer codes for the values rows share."""

    key_codes: np.ndarray  # offer -> index into keys
    keys: list[tuple[str, float]]  # distinct (gpu slug, GB per GPU)
    price: np.ndarray
    count: np.ndarray
    spot: np.ndarray
    community: np.ndarray
    stale_codes: np.ndarray  # offer -> index into stale_keys
    stale_keys: list[tuple[str, dt.date | None]]  # distinct (provider, price snapshot date)
    columns: dict[str, np.ndarray]  # provider, sku, gpu, tier, commitment_months, price_basis, region
    spot_rate: np.ndarray  # measured preemptions per node-hour (AWS buckets); NaN: the default
    age: np.ndarray  # days between the price's page and the ranking date (0 for a later page)


def _as_date(value: object) -> dt.date | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return pd.Timestamp(value).date()
    return dt.date.fromisoformat(str(value)[:10])


def _column(frame: pd.DataFrame, name: str, default: object) -> pd.Series:
    return frame[name] if name in frame.columns else pd.Series(default, index=frame.index)


@functools.cache
def _catalog_memory() -> dict[str, float]:
    from gpuprice.models.catalog import load_gpu_catalog

    catalog = load_gpu_catalog()
    return dict(zip(catalog["slug"].tolist(), catalog["memory_gb"].tolist(), strict=True))


def _cheapest_region(offers: pd.DataFrame, price: np.ndarray) -> np.ndarray:
    """True for each offer's cheapest region (the first of equal ones): a hyperscaler states one
    price per region, and a job runs in one of them. Offers without regions are untouched."""
    if "region" not in offers.columns or offers["region"].isna().all():
        return np.ones(len(offers), dtype=bool)
    peers = [c for c in _REGION_PEERS if c in offers.columns]
    codes = offers.groupby(peers, dropna=False, sort=False).ngroup().to_numpy()
    price = np.where(np.isnan(price), np.inf, price)
    order = np.lexsort((np.arange(len(offers)), price, codes))
    _, first = np.unique(codes[order], return_index=True)
    mask = np.zeros(len(offers), dtype=bool)
    mask[order[first]] = True
    return mask


def _usable_offers(offers: pd.DataFrame, day: dt.date) -> _Offers:
    """Offers that can be ranked: a catalog GPU, a positive price, in force on ``day``."""

    missing = [c for c in REQUIRED_OFFER_COLUMNS if c not in offers.columns]
    if missing:
        raise ValueError(f"rank_offers: offers lack columns {missing}")
    price = pd.to_numeric(offers["usd_per_gpu_hour"].astype("float64"), errors="coerce")
    effective = pd.to_datetime(_column(offers, "effective_from", None), errors="coerce")
    keep = (
        offers["gpu"].isin(_catalog_memory().keys()).to_numpy()
        & (price > 0).to_numpy()
        & (pd.to_numeric(offers["gpu_count"], errors="coerce") >= 1).to_numpy()
        & ~(effective > pd.Timestamp(day)).to_numpy()
    )
    keep &= _cheapest_region(offers, np.where(keep, price.to_numpy(dtype=float), np.inf))
    wanted = [c for c in offers.columns if c in _OFFER_COLUMNS_USED]
    frame = offers.loc[keep, wanted].reset_index(drop=True)  # source order breaks the last ties
    prices = price.to_numpy(dtype=float)[keep]
    count = frame["gpu_count"].to_numpy(dtype=np.int64)

    # GB per GPU: the offer's figure when plausible (GH200 96/144 GB share a slug), else the catalog's.
    nominal = frame["gpu"].map(_catalog_memory()).to_numpy(dtype=float)
    stated = pd.to_numeric(_column(frame, "vram_gb", np.nan), errors="coerce").to_numpy(dtype=float)
    plausible = np.isfinite(stated) & (stated >= 0.5 * nominal) & (stated <= 2.0 * nominal)
    memory = np.round(np.where(plausible, stated, nominal), 1)
    gpu_codes, gpu_names = pd.factorize(frame["gpu"], sort=True)
    memories, memory_codes = np.unique(memory, return_inverse=True)
    key_values, key_codes = np.unique(
        gpu_codes.astype(np.int64) * len(memories) + memory_codes, return_inverse=True
    )
    keys = [
        (str(gpu_names[k // len(memories)]), float(memories[k % len(memories)])) for k in key_values.tolist()
    ]

    # A price is as old as its page (observed_on); frames without it fall back to the snapshot date.
    price_dates = _column(frame, "snapshot_date", day)
    if "observed_on" in frame.columns:
        price_dates = frame["observed_on"].where(frame["observed_on"].notna(), price_dates)
    date_codes, date_values = pd.factorize(price_dates, sort=False, use_na_sentinel=False)
    dates = [_as_date(d) for d in date_values]
    provider_codes, providers = pd.factorize(frame["provider"], sort=False)
    stale_values, stale_codes = np.unique(
        provider_codes.astype(np.int64) * len(dates) + date_codes, return_inverse=True
    )
    stale_keys = [(str(providers[v // len(dates)]), dates[v % len(dates)]) for v in stale_values.tolist()]
    # When the price was seen (output): the same page dates.
    observed = pd.to_datetime(pd.Series(price_dates, index=frame.index), errors="coerce")
    observed_codes, observed_values = pd.factorize(observed, use_na_sentinel=False)
    observed_dates = np.array([_as_date(v) for v in observed_values] + [None], dtype=object)
    ages = np.array([max(age_days(d, day) or 0, 0) for d in dates], dtype=np.int64)
    return _Offers(
        age=ages[date_codes],
        key_codes=key_codes,
        keys=keys,
        price=prices,
        count=count,
        spot=(frame["tier"] == "spot").to_numpy(),
        community=frame["community"].fillna(False).astype(bool).to_numpy(),
        spot_rate=np.array(
            [
                (rate if (rate := bucket_rate(b if isinstance(b, str) else None)) is not None else np.nan)
                for b in _column(frame, "interruption_bucket", None).tolist()
            ],
            dtype=float,
        ),
        stale_codes=stale_codes,
        stale_keys=stale_keys,
        columns={
            "provider": frame["provider"].to_numpy(dtype=object),
            "sku": frame["sku"].to_numpy(dtype=object),
            "gpu": frame["gpu"].to_numpy(dtype=object),
            "tier": frame["tier"].to_numpy(dtype=object),
            "commitment_months": pd.to_numeric(
                _column(frame, "commitment_months", np.nan), errors="coerce"
            ).to_numpy(dtype=float, na_value=np.nan),
            "price_basis": _column(frame, "price_basis", "list").fillna("list").to_numpy(dtype=object),
            "region": _column(frame, "region", None).to_numpy(dtype=object),
            "bucket": _column(frame, "interruption_bucket", None).to_numpy(dtype=object),
            "observed_on": observed_dates[observed_codes],
        },
    )


# ------------------------------------------------------------------ per-workload facts
@dataclass(frozen=True)
class _Workloads:
    """The workloads as parallel arrays (index = position in the list given to rank_offers)."""

    items: Sequence[Workload]
    shapes: list[ModelShape]
    tokens: np.ndarray
    checkpoint_count: np.ndarray  # progress checkpoints; NaN for wall-clock checkpointing
    checkpoint_hours: np.ndarray  # wall-clock interval; NaN for progress checkpointing
    deadline: np.ndarray  # NaN when there is none
    min_nodes: np.ndarray
    max_nodes: np.ndarray
    max_gpus: np.ndarray  # inf when there is no limit
    gpu_limit: np.ndarray  # max_gpus or max_nodes whole nodes, the stricter
    budget: np.ndarray  # NaN when there is none
    full: np.ndarray
    risk_rule: np.ndarray  # full fine-tune / pretraining without proven checkpointing
    long_hours: np.ndarray  # the workload's long_run_hours
    checkpoint_gb: np.ndarray
    model_gb: np.ndarray
    dataset_gb: np.ndarray
    assumptions_json: list[str]  # only the cost terms a workload overrides (defaults: models.cost.CostTerms)

    @classmethod
    def of(cls, workloads: Sequence[Workload]) -> _Workloads:
        def per(fn: Any, dtype: Any = float) -> np.ndarray:
            return np.array([fn(w) for w in workloads], dtype=dtype)

        return cls(
            items=workloads,
            shapes=[ModelShape.of(w.arch()) for w in workloads],
            tokens=per(lambda w: w.training_tokens),
            checkpoint_count=per(
                lambda w: (
                    max(1, math.ceil(w.training_tokens / w.tokens_per_checkpoint - 1e-9))
                    if w.tokens_per_checkpoint is not None
                    else np.nan
                )
            ),
            checkpoint_hours=per(
                lambda w: w.checkpoint_interval_hours if w.checkpoint_interval_hours else np.nan
            ),
            deadline=per(lambda w: w.deadline_hours if w.deadline_hours is not None else np.nan),
            min_nodes=per(lambda w: w.min_nodes, np.int64),
            max_nodes=per(lambda w: w.max_nodes, np.int64),
            max_gpus=per(lambda w: w.max_gpus if w.max_gpus is not None else np.inf),
            gpu_limit=per(lambda w: w.gpu_limit),
            budget=per(lambda w: w.budget_usd if w.budget_usd is not None else np.nan),
            full=per(lambda w: w.method == "full", bool),
            risk_rule=per(lambda w: w.method == "full" and w.checkpointing != "proven", bool),
            long_hours=per(lambda w: w.long_run_hours),
            checkpoint_gb=per(lambda w: w.checkpoint_gb()),
            model_gb=per(lambda w: w.model_download_gb()),
            dataset_gb=per(lambda w: w.dataset_gb()),
            assumptions_json=[
                json.dumps(
                    w.cost_terms.model_dump(mode="json", exclude_defaults=True),
                    separators=(",", ":"),
                    sort_keys=True,
                )
                for w in workloads
            ],
        )

    def checkpoints(self, index: np.ndarray, hours: np.ndarray) -> np.ndarray:
        """Checkpoints per configuration: the progress count, or one per wall-clock interval."""
        by_clock = np.maximum(1.0, np.ceil(hours / self.checkpoint_hours[index] - 1e-9))
        progress = self.checkpoint_count[index]
        return np.where(np.isnan(progress), by_clock, progress)

    def costs(
        self,
        index: np.ndarray,
        *,
        gpus: np.ndarray,
        nodes: np.ndarray,
        price: np.ndarray,
        hours: np.ndarray,
        spot: np.ndarray,
        community: np.ndarray,
        spot_rate: np.ndarray | None = None,
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(checkpoints, every cost term) for configurations of the workloads at ``index``."""
        checkpoints = self.checkpoints(index, hours)
        return checkpoints, checkpoint_costs(
            gpus=gpus,
            nodes=nodes,
            usd_per_gpu_hour=price,
            compute_hours=hours,
            checkpoints=checkpoints,
            spot=spot,
            community=community,
            checkpoint_gb=self.checkpoint_gb[index],
            model_gb=self.model_gb[index],
            dataset_gb=self.dataset_gb[index],
            terms=CostTermArrays([w.cost_terms for w in self.items], index),
            spot_rate=spot_rate,
        )


# ------------------------------------------------------------------ per-configuration facts
@dataclass(frozen=True)
class _Configs:
    """Configurations the workloads can run on, as parallel arrays (one element per configuration)."""

    workload: np.ndarray  # index into _Workloads
    key: np.ndarray  # index into _Offers.keys
    offer_count: np.ndarray  # GPUs per offer this configuration serves
    risk: np.ndarray  # interruption class it was chosen for: 2 x spot + community
    gpus: np.ndarray  # GPUs in the job (offer_count x nodes for scale-out)
    nodes: np.ndarray
    sharding: np.ndarray
    per_gpu_gb: np.ndarray
    tokens_per_sec_per_gpu: np.ndarray
    mfu: np.ndarray
    communication_share: np.ndarray
    hours: np.ndarray
    one_gpu_fits: np.ndarray
    pcie_collectives: np.ndarray
    verdict: np.ndarray  # fits / tight (models/fit_verdict.py; does_not_fit never gets here)
    headroom_gb: np.ndarray  # card - predicted device peak
    gpu_memory_gb: np.ndarray  # the card's usable 1e9 bytes

    def take(self, index: np.ndarray) -> _Configs:
        return _Configs(**{f: getattr(self, f)[index] for f in self.__dataclass_fields__})

    def __len__(self) -> int:
        return len(self.key)

    @staticmethod
    def concat(parts: Sequence[_Configs]) -> _Configs:
        return _Configs(
            **{f: np.concatenate([getattr(p, f) for p in parts]) for f in _Configs.__dataclass_fields__}
        )


def _memory_fit(
    workloads: _Workloads, members: np.ndarray, keys: Sequence[tuple[str, float]], counts: Sequence[int]
) -> dict[str, np.ndarray]:
    """Least complex fitting strategy per (workload, key, GPU count) for the workloads ``members``;
    entries only where something fits."""
    from gpuprice.models.catalog import usable_memory_gb
    from gpuprice.models.memory import fit_sweep

    # The card's usable 1e9 bytes (an "80 GB" A100 holds 85.9e9), as the predicted peaks count them.
    names = {f"{i}": usable_memory_gb(slug, memory) for i, (slug, memory) in enumerate(keys)}
    sweep = fit_sweep(
        [workloads.items[m].setup() for m in members.tolist()], names, sorted(set(counts)), STRATEGIES
    )
    best = sweep["least_complex"].to_numpy(dtype=bool)
    return {
        "workload": members[sweep["setup_index"].to_numpy(dtype=np.int64)[best]],
        "key": sweep["gpu"].to_numpy(dtype=object)[best].astype(np.int64),
        "gpus": sweep["gpu_count"].to_numpy(dtype=np.int64)[best],
        "sharding": sweep["sharding"].to_numpy(dtype=object)[best],
        "per_gpu_gb": sweep["per_gpu_gb"].to_numpy(dtype=float)[best],
        "verdict": sweep["verdict"].to_numpy(dtype=object)[best],
        "headroom_gb": sweep["headroom_gb"].to_numpy(dtype=float)[best],
        "gpu_memory_gb": sweep["gpu_memory_gb"].to_numpy(dtype=float)[best],
    }


def _throughput(
    workloads: _Workloads, keys: Sequence[tuple[str, float]], fits: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    from gpuprice.models.memory_setup import keeps_scores

    items, shapes, w = workloads.items, workloads.shapes, fits["workload"]

    def per(values: list[Any]) -> np.ndarray:
        return np.asarray(values)[w]

    return predict_columns(
        {
            "gpu": np.array([slug for slug, _ in keys], dtype=object)[fits["key"]],
            "gpus": fits["gpus"],
            "method": per([x.method for x in items]),
            "seq_len": per([x.seq_len for x in items]),
            "micro_batch": per([x.micro_batch for x in items]),
            "grad_checkpointing": per([x.uses_checkpointing for x in items]),
            # torch.compile or a framework's own fused kernels (Unsloth) speed the job up
            "compile": per([compiled_kernels(x.compile, x.framework) for x in items]),
            "precision": per([x.precision for x in items]),
            "sharding": fits["sharding"],
            "n_params": per([x.n_params for x in shapes]),
            "n_active_params": per([x.n_active_params for x in shapes]),
            "layers": per([x.layers for x in shapes]),
            "hidden": per([x.hidden for x in shapes]),
            "attn_width": per([x.attn_width for x in shapes]),
            # eager / explicit-score attention streams seq x seq scores through HBM
            "score_heads": per(
                [float(x.arch().num_heads) if keeps_scores(x.setup()) else 0.0 for x in items]
            ),
        }
    )


def _pcie_collectives(keys: Sequence[tuple[str, float]], key: np.ndarray, gpus: np.ndarray) -> np.ndarray:
    """Multi-GPU jobs whose GPUs exchange data over PCIe only (computed per distinct pair)."""
    limit = max(PCIE_BUSBW_GBS.values())
    pairs, codes = np.unique(key * 1_000_003 + gpus, return_inverse=True)
    flags = np.array(
        [
            (p % 1_000_003) > 1
            and intra_node_busbw_gbs(gpu_profile(keys[p // 1_000_003][0]), min(p % 1_000_003, GPUS_PER_NODE))
            <= limit
            for p in pairs.tolist()
        ],
        dtype=bool,
    )
    return flags[codes]


def _configurations(
    workloads: _Workloads, keys: Sequence[tuple[str, float]], offer_counts: Sequence[int], max_gpus: int
) -> _Configs | None:
    """Every (workload, key, offer GPU count, interruption class) that can run, with its node count."""
    offer_counts = sorted({int(c) for c in offer_counts})
    sells_nodes = GPUS_PER_NODE in offer_counts
    # One memory sweep per node range: only the workloads that scale out need the node counts.
    groups: dict[tuple[int, int], list[int]] = {}
    for index, (low, high) in enumerate(
        zip(workloads.min_nodes.tolist(), workloads.max_nodes.tolist(), strict=True)
    ):
        cap = min(max_gpus, int(workloads.gpu_limit[index])) // GPUS_PER_NODE
        groups.setdefault((low, max(low, min(high, cap))), []).append(index)
    sweeps = []
    for (low, high), members in groups.items():
        scale = [n * GPUS_PER_NODE for n in range(low, high + 1)] if sells_nodes and high > 1 else []
        sweeps.append(
            _memory_fit(workloads, np.array(members, dtype=np.int64), keys, [1, *offer_counts, *scale])
        )
    fits = {name: np.concatenate([sweep[name] for sweep in sweeps]) for name in sweeps[0]}
    w, gpus = fits["workload"], fits["gpus"]
    nodes = -(-gpus // GPUS_PER_NODE)
    # Offers sold in fixed sizes run as sold when the size meets min_nodes (beyond the job's GPU or
    # node limit they are kept, to be marked infeasible) ...
    scales_out = sells_nodes & (workloads.max_nodes[w] > 1)
    as_sold = np.isin(gpus, offer_counts) & (nodes >= workloads.min_nodes[w]) & (gpus <= max_gpus)
    as_sold &= ~((gpus == GPUS_PER_NODE) & scales_out)
    # ... and whole 8-GPU nodes are combined into the node count the workload needs.
    scale = scales_out & (gpus % GPUS_PER_NODE == 0) & (nodes >= workloads.min_nodes[w])
    scale &= (nodes <= workloads.max_nodes[w]) & (gpus <= np.minimum(max_gpus, workloads.gpu_limit[w]))
    needed = as_sold | scale
    one_gpu = (gpus == 1) & (fits["sharding"] == "none")
    one_gpu_pairs = np.unique(w[one_gpu] * len(keys) + fits["key"][one_gpu])
    # The fewest GPUs of each type that hold the job: the baseline more GPUs must beat.
    group = w * len(keys) + fits["key"]
    by_size = np.lexsort((gpus, group))
    _, first = np.unique(group[by_size], return_index=True)
    baseline = np.zeros(len(w), dtype=bool)
    baseline[by_size[first]] = True
    computed = needed | baseline
    fits = {name: values[computed] for name, values in fits.items()}
    if not needed.any():
        return None
    as_sold, scale, needed = as_sold[computed], scale[computed], needed[computed]

    speed = _throughput(workloads, keys, fits)
    w, gpus = fits["workload"], fits["gpus"]
    hours, tps, mfu = _right_sized_hours(
        workloads.tokens[w],
        w * len(keys) + fits["key"],
        gpus,
        speed["tokens_per_sec_per_gpu"],
        speed["mfu"],
    )
    every = _Configs(
        workload=w,
        key=fits["key"],
        offer_count=gpus,
        risk=np.zeros(len(w), dtype=np.int64),
        gpus=gpus,
        nodes=-(-gpus // GPUS_PER_NODE),
        sharding=fits["sharding"],
        per_gpu_gb=fits["per_gpu_gb"],
        tokens_per_sec_per_gpu=tps,
        mfu=mfu,
        communication_share=speed["communication_share"],
        hours=hours,
        one_gpu_fits=np.isin(w * len(keys) + fits["key"], one_gpu_pairs),
        pcie_collectives=_pcie_collectives(keys, fits["key"], gpus),
        verdict=fits["verdict"],
        headroom_gb=fits["headroom_gb"],
        gpu_memory_gb=fits["gpu_memory_gb"],
    )
    sold = every.take(np.flatnonzero(as_sold))
    parts = [dataclasses.replace(sold, risk=np.full(len(sold), r, dtype=np.int64)) for r in RISKS]
    candidates = np.flatnonzero(scale)
    for risk in RISKS:
        picked = every.take(_choose_nodes(every, candidates, workloads, risk, len(keys)))
        parts.append(
            dataclasses.replace(
                picked,
                offer_count=np.full(len(picked), GPUS_PER_NODE, dtype=np.int64),
                risk=np.full(len(picked), risk, dtype=np.int64),
            )
        )
    configs = _Configs.concat(parts)
    return configs if len(configs) else None


def _right_sized_hours(
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


def _choose_nodes(
    configs: _Configs, candidates: np.ndarray, workloads: _Workloads, risk: int, n_keys: int
) -> np.ndarray:
    """Per (workload, key) among ``candidates``: the fewest nodes whose expected wall time (start-up
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
        spot=np.full(len(c), risk >= 2),
        community=np.full(len(c), risk % 2 == 1),
    )
    wall = costs["wall_hours"]
    late = wall > workloads.deadline[c.workload]  # False when there is no deadline (NaN)
    group = c.workload * n_keys + c.key
    # Within a group: on-time ones first by GPU count; late ones after, fastest first.
    order = np.lexsort((np.where(late, wall, c.gpus), late, group))
    _, first = np.unique(group[order], return_index=True)
    return candidates[order[first]]


# ------------------------------------------------------------------ warnings and cost terms text
def _config_warnings(
    workload: Workload,
    gpu: str,
    gpus: int,
    nodes: int,
    offer_count: int,
    *,
    ecc: bool,
    pcie: bool,
    comm_share: float,
    one_gpu_fits: bool,
    spot: bool,
    community: bool = False,
    tight: str | None = None,
    wall_hours: float,
    checkpoint_every: float,
    rework_hours: float = 0.0,
    interruptions: float = 0.0,
) -> list[str]:
    """Warnings of one configuration and tier: short stable code, colon, one sentence."""
    out: list[str] = [tight] if tight else []
    if not ecc and wall_hours >= LONG_JOB_HOURS:
        out.append(
            f"no-ecc: {gpu} has no ECC memory; a {wall_hours:.0f} h job risks silent errors and has no support"
        )
    if workload.method == "full" and pcie:
        out.append(
            f"pcie-multi-gpu: {gpus}x {gpu} exchange gradients over PCIe only; "
            f"{comm_share:.0%} of step time is communication in full fine-tuning"
        )
    if (spot or community) and workload.method == "full" and wall_hours > workload.long_run_hours:
        rate = workload.cost_terms.spot_preemptions_per_node_hour
        capacity = "spot" if spot else "community capacity"
        ranked = (
            f"ranked after reserved/on-demand offers: the run is longer than {workload.long_run_hours:g} h "
            "and checkpointing is not proven (checkpointing: proven lifts this)"
            if workload.checkpointing != "proven"
            else "checkpointing declared proven"
        )
        out.append(
            f"spot-long-run: a {wall_hours:.0f} h full fine-tune on {capacity} expects {interruptions:.1f} "
            f"interruptions ({rate:g} per node-hour) and {rework_hours:.1f} h of rework with a checkpoint every "
            f"{checkpoint_every:.1f} h; {ranked}"
        )
    if offer_count >= GPUS_PER_NODE and nodes == 1 and one_gpu_fits:
        out.append(f"whole-node: renting {offer_count} GPUs although one {gpu} fits this workload")
    if workload.deadline_hours is not None and wall_hours > workload.deadline_hours:
        out.append(
            f"deadline-missed: {wall_hours:.0f} h expected against a {workload.deadline_hours:g} h deadline"
        )
    return out


def _band_columns(table: _Workloads, wi: np.ndarray, per_gpu_gb: np.ndarray) -> dict[str, np.ndarray]:
    """The out-of-sample error band around each row's predicted peak (models/memory_band.py)."""
    from gpuprice.models.memory_band import band_of

    bands = [band_of(w.method) for w in table.items]
    low = np.array([b.low for b in bands], dtype=np.float64)[wi]
    high = np.array([b.high for b in bands], dtype=np.float64)[wi]
    return {"band_low_gb": per_gpu_gb * (1 + low), "band_high_gb": per_gpu_gb * (1 + high)}


def _tight_warning(workload: Workload, configs: _Configs, c: int) -> str | None:
    """``tight-fit: ...`` when the predicted peak fits the card but the planning margin does not."""
    from gpuprice.models.fit_verdict import judge

    capacity = float(configs.gpu_memory_gb[c])
    verdict = judge(capacity - float(configs.headroom_gb[c]), capacity, workload.margin)
    return verdict.warning()


def _staleness_warnings(
    provider: str, price_date: dt.date | None, day: dt.date, stale: frozenset[str], max_age_days: int
) -> list[str]:
    out: list[str] = []
    if provider in stale:
        out.append(
            f"stale-provider: {provider}'s latest scrape failed or is more than {STALE_AFTER_DAYS} days old"
        )
    age = age_days(price_date, day)
    if price_date is not None and age is not None and age > max_age_days:
        out.append(
            f"stale-price: price observed on {price_date.isoformat()}, {age} days before {day.isoformat()}"
            f" (older than the {max_age_days}-day limit: not current)"
        )
    return out


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


def _cost_terms_suffixes(
    workloads: _Workloads,
    w: np.ndarray,
    costs: dict[str, np.ndarray],
    checkpoints: np.ndarray,
    rows: np.ndarray,
) -> list[str]:
    """The price-independent part of each situation's cost_terms JSON (after the per-row amounts).

    Kept short on purpose: it is repeated on every row. The assumptions behind the numbers are the
    workload's cost terms (``gpuprice workloads --json``); only its overrides are repeated here.
    """
    v = {name: costs[name][rows].tolist() for name in _SUFFIX_VALUES}
    out = []
    for i, (wi, count) in enumerate(zip(w[rows].tolist(), checkpoints[rows].tolist(), strict=True)):
        compute = v["wall_hours"][i] - v["orchestration_hours"][i] - v["rework_hours"][i]
        out.append(
            f',"storage_usd":{v["storage_usd"][i]:.2f},"data_usd":{v["data_usd"][i]:.2f}'
            f',"engineer_usd":{v["engineer_usd"][i]:.2f},"reusable_value_usd":{v["reusable_value_usd"][i]:.2f}'
            f',"checkpoints":{int(count)},"compute_hours":{compute:.4f}'
            f',"orchestration_hours":{v["orchestration_hours"][i]:.4f},"rework_hours":{v["rework_hours"][i]:.4f}'
            f',"wall_hours":{v["wall_hours"][i]:.4f},"expected_interruptions":{v["expected_interruptions"][i]:.4g}'
            f',"checkpoint_gb":{workloads.checkpoint_gb[wi]:.3f},"dataset_gb":{workloads.dataset_gb[wi]:.3f}'
            f',"model_download_gb":{workloads.model_gb[wi]:.3f},"assumptions":{workloads.assumptions_json[wi]}}}'
        )
    return out


def _cost_terms_json(
    costs: dict[str, np.ndarray], suffixes: list[str], situation_codes: np.ndarray
) -> list[str]:
    """Per-row JSON: the price-dependent amounts, then the situation's fixed part.

    One f-string per row produces the final str objects directly (faster than building numpy
    string arrays and converting them to objects)."""
    columns = zip(
        costs["gpu_usd"].tolist(),
        costs["orchestration_usd"].tolist(),
        costs["rework_usd"].tolist(),
        costs["total_usd"].tolist(),
        situation_codes.tolist(),
        strict=True,
    )
    return [
        f'{{"gpu_usd":{g:.2f},"orchestration_usd":{o:.2f},"rework_usd":{r:.2f},"total_usd":{t:.2f}{suffixes[c]}'
        for g, o, r, t, c in columns
    ]


def _preemption_columns(
    table: _Workloads, wi: np.ndarray, spot: np.ndarray, spot_rate: np.ndarray, buckets: np.ndarray
) -> dict[str, object]:
    """Per row: the spot preemption rate the cost used and where it came from (None off spot)."""
    default = np.array([w.cost_terms.spot_preemptions_per_node_hour for w in table.items], dtype=float)[wi]
    used = np.where(np.isnan(spot_rate), default, spot_rate)
    source = [
        (rate_source(b if isinstance(b, str) else None) if s else None)
        for s, b in zip(spot.tolist(), buckets.tolist(), strict=True)
    ]
    return {
        "preemption_rate_per_node_hour": np.where(spot, used, np.nan),
        "preemption_rate_source": np.array(source, dtype=object),
    }


def _ecc(gpu: str) -> bool:
    from gpuprice.models.catalog import get_gpu

    return get_gpu(gpu).ecc


def _empty() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in RANKING_COLUMNS})


# ------------------------------------------------------------------ main entry
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
) -> pd.DataFrame:
    """Every fitting offer x workload, ranked per workload by cost per checkpoint (ties: wall time).

    ``offers`` has the warehouse ``price_snapshots`` columns; offers with GPU ``unknown`` (or not in
    the catalog), without a positive price or with a scheduled future price are skipped. Returns
    exactly RANKING_COLUMNS, workloads in the given order; ``warnings`` holds one list of
    "code: text" strings per row. Offers beyond a workload's limits (deadline, GPUs, nodes,
    budget) are left out, or with ``include_infeasible`` ranked after the others with the
    CONSTRAINTS they break in ``excluded_by``; offers of tiers or providers the workload does not
    consider are always left out. Offers whose price is not current (page more than
    ``max_price_age_days`` before the date) are left out, or with ``include_stale`` ranked after
    every current offer with ``price_age`` in ``excluded_by`` and a ``stale-price`` warning;
    ``price_age_days`` is each price's age.
    """
    day = _as_date(snapshot_date)
    if day is None:
        raise ValueError("rank_offers needs a snapshot_date")
    if offers.empty or not workloads:
        return _empty()
    usable = _usable_offers(offers, day)
    if usable.price.size == 0:
        return _empty()
    table = _Workloads.of(workloads)
    configs = _configurations(table, usable.keys, np.unique(usable.count).tolist(), max_gpus)
    if configs is None:
        return _empty()
    return _assemble(
        usable,
        table,
        configs,
        day,
        frozenset(stale_providers),
        include_infeasible=include_infeasible,
        max_age_days=max_price_age_days,
        include_stale=include_stale,
    )


def _match(offers: _Offers, configs: _Configs, n_workloads: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (workload, offer) pair with a configuration: (workload index, offer index, config index)."""
    width = int(max(offers.count.max(), configs.offer_count.max())) + 1
    span = len(offers.keys) * width * len(RISKS)

    def code(workload: np.ndarray, key: np.ndarray, count: np.ndarray, risk: np.ndarray) -> np.ndarray:
        return ((workload * len(offers.keys) + key) * width + count) * len(RISKS) + risk

    config_codes = code(configs.workload, configs.key, configs.offer_count, configs.risk)
    order = np.argsort(config_codes, kind="stable")
    config_codes = config_codes[order]
    offer_risk = 2 * offers.spot.astype(np.int64) + offers.community.astype(np.int64)
    offer_codes = code(
        np.zeros(len(offers.price), dtype=np.int64),
        offers.key_codes.astype(np.int64),
        offers.count,
        offer_risk,
    )
    pair_codes = (np.arange(n_workloads, dtype=np.int64)[:, None] * span + offer_codes[None, :]).ravel()
    position = np.clip(np.searchsorted(config_codes, pair_codes), 0, len(config_codes) - 1)
    found = np.flatnonzero(config_codes[position] == pair_codes)
    workload, offer = np.divmod(found, len(offers.price))
    return workload, offer, order[position[found]]


def _selected(offers: _Offers, table: _Workloads, wi: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Pairs whose offer is of a tier and provider the workload considers (``tier``, ``providers``)."""
    keep = np.ones(len(rows), dtype=bool)
    for index, workload in enumerate(table.items):
        mine = wi == index
        if workload.tier is not None:
            keep[mine] &= np.isin(offers.columns["tier"][rows[mine]], list(workload.tier))
        if workload.providers is not None:
            keep[mine] &= np.isin(offers.columns["provider"][rows[mine]], list(workload.providers))
    return keep


def _exclusions(
    table: _Workloads,
    wi: np.ndarray,
    gpus: np.ndarray,
    nodes: np.ndarray,
    costs: dict[str, np.ndarray],
    too_old: np.ndarray,
) -> np.ndarray:
    """One column per CONSTRAINTS code: True where the configuration breaks that limit."""
    with np.errstate(invalid="ignore"):
        return np.column_stack(
            [
                costs["wall_hours"] > table.deadline[wi],  # NaN deadline: never late
                gpus > table.max_gpus[wi],
                nodes > table.max_nodes[wi],
                costs["total_usd"] > table.budget[wi],
                too_old,
            ]
        )


def _constraint_warnings(
    workload: Workload, codes: list[str], gpus: int, nodes: int, total: float
) -> list[str]:
    """Warnings of the limits a shown-anyway (``include_infeasible``) offer breaks; the deadline's
    is among the configuration warnings already."""
    out = []
    if "max_gpus" in codes:
        out.append(f"over-gpu-limit: {gpus} GPUs exceed the job's limit of {workload.max_gpus}")
    if "max_nodes" in codes:
        out.append(f"over-node-limit: {nodes} nodes exceed the job's limit of {workload.max_nodes}")
    if "budget" in codes:
        out.append(f"over-budget: ${total:,.2f} in total exceeds the ${workload.budget_usd:,.2f} budget")
    return out


def _assemble(
    offers: _Offers,
    table: _Workloads,
    configs: _Configs,
    day: dt.date,
    stale: frozenset[str],
    *,
    include_infeasible: bool,
    max_age_days: int,
    include_stale: bool,
) -> pd.DataFrame:
    wi, rows, cfg = _match(offers, configs, len(table.items))
    keep = _selected(offers, table, wi, rows)
    wi, rows, cfg = wi[keep], rows[keep], cfg[keep]
    if rows.size == 0:
        return _empty()
    gpus = configs.gpus[cfg].astype(float)
    nodes = configs.nodes[cfg].astype(float)
    hours = configs.hours[cfg]
    price, spot, community = offers.price[rows], offers.spot[rows], offers.community[rows]
    spot_rate = offers.spot_rate[rows]
    checkpoints, costs = table.costs(
        wi,
        gpus=gpus,
        nodes=nodes,
        price=price,
        hours=hours,
        spot=spot,
        community=community,
        spot_rate=spot_rate,
    )
    too_old = offers.age[rows] > max_age_days
    broken = _exclusions(table, wi, gpus, nodes, costs, too_old)
    infeasible: np.ndarray = np.asarray(broken[:, : len(LIMITS)].any(axis=1), dtype=bool)

    # Per workload (in the given order) current offers within every limit first, then current
    # offers beyond a limit, then offers whose price is not current; within each, cheapest per
    # checkpoint; ties by expected wall time, then the offers' own order (offers_as_of sorts by
    # provider, SKU, count, tier). Offers beyond a limit or not current are dropped unless asked for.
    # The guide's risk rule: a long full fine-tune / pretraining run without proven checkpointing
    # ranks interruptible capacity (spot, community) after reserved and on-demand offers.
    demoted = (spot | community) & table.risk_rule[wi] & (costs["wall_hours"] > table.long_hours[wi])
    ranking = np.lexsort(
        (
            rows,
            costs["wall_hours"],
            np.round(costs["cost_per_checkpoint_usd"], 6),
            demoted,
            infeasible,
            too_old,
            wi,
        )
    )
    if not include_infeasible:
        ranking = ranking[~infeasible[ranking]]
    if not include_stale:
        ranking = ranking[~too_old[ranking]]
    if ranking.size == 0:
        return _empty()
    wi, rows, cfg, gpus, nodes, hours, price, spot, community, spot_rate, checkpoints, broken = (
        a[ranking]
        for a in (wi, rows, cfg, gpus, nodes, hours, price, spot, community, spot_rate, checkpoints, broken)
    )
    costs = {name: values[ranking] for name, values in costs.items()}
    broken_codes = broken.astype(np.int64) @ (1 << np.arange(len(CONSTRAINTS), dtype=np.int64))
    excluded_lists = [
        [c for i, c in enumerate(CONSTRAINTS) if code >> i & 1] for code in range(1 << len(CONSTRAINTS))
    ]
    starts = np.searchsorted(wi, np.arange(len(table.items)))
    rank = np.arange(len(wi), dtype=np.int64) - starts[wi] + 1

    # Price-independent facts are shared by every offer of one situation: configuration x spot x
    # community (cost terms, configuration warnings) and provider x price date (staleness).
    # A measured spot rate changes the interruptions, so it is part of the situation.
    rate_values, rate_codes = np.unique(np.nan_to_num(spot_rate, nan=-1.0), return_inverse=True)
    situation = ((cfg.astype(np.int64) * 2 + spot) * 2 + community) * len(rate_values) + rate_codes
    _, first_row, sit_codes = np.unique(situation, return_index=True, return_inverse=True)
    config_warnings = []
    firsts = {
        name: values[first_row].tolist()
        for name, values in (
            ("cfg", cfg),
            ("w", wi),
            ("gpus", gpus),
            ("nodes", nodes),
            ("spot", spot),
            ("community", community),
            ("wall", costs["wall_hours"]),
            ("every", hours / checkpoints),
            ("rework", costs["rework_hours"]),
            ("interruptions", costs["expected_interruptions"]),
        )
    }
    for i, c in enumerate(firsts["cfg"]):
        gpu = offers.keys[int(configs.key[c])][0]
        config_warnings.append(
            _config_warnings(
                table.items[firsts["w"][i]],
                gpu,
                int(firsts["gpus"][i]),
                int(firsts["nodes"][i]),
                int(configs.offer_count[c]),
                ecc=_ecc(gpu),
                pcie=bool(configs.pcie_collectives[c]),
                comm_share=float(configs.communication_share[c]),
                one_gpu_fits=bool(configs.one_gpu_fits[c]),
                spot=bool(firsts["spot"][i]),
                community=bool(firsts["community"][i]),
                tight=_tight_warning(table.items[firsts["w"][i]], configs, c),
                wall_hours=firsts["wall"][i],
                checkpoint_every=firsts["every"][i],
                rework_hours=firsts["rework"][i],
                interruptions=firsts["interruptions"][i],
            )
        )
    suffixes = _cost_terms_suffixes(table, wi, costs, checkpoints, first_row)
    stale_warnings = [_staleness_warnings(p, d, day, stale, max_age_days) for p, d in offers.stale_keys]
    # One warning list per distinct (situation, staleness) pair, copied per row (rows own their lists).
    pair = sit_codes.astype(np.int64) * len(stale_warnings) + offers.stale_codes[rows]
    pairs, pair_codes = np.unique(pair, return_inverse=True)
    pair_lists = [
        config_warnings[p // len(stale_warnings)] + stale_warnings[p % len(stale_warnings)]
        for p in pairs.tolist()
    ]

    warnings = [list(pair_lists[p]) for p in pair_codes.tolist()]
    for i in np.flatnonzero(broken_codes).tolist():
        warnings[i] += _constraint_warnings(
            table.items[int(wi[i])],
            excluded_lists[int(broken_codes[i])],
            int(gpus[i]),
            int(nodes[i]),
            float(costs["total_usd"][i]),
        )

    cols = {name: values[rows] for name, values in offers.columns.items()}
    names = np.array([w.name for w in table.items], dtype=object)
    return pd.DataFrame(
        {
            "snapshot_date": np.full(len(rows), day, dtype=object),
            "workload": names[wi],
            "rank": rank,
            "provider": cols["provider"],
            "sku": cols["sku"],
            "gpu": cols["gpu"],
            "gpu_count": gpus.astype(np.int64),
            "nodes": nodes.astype(np.int64),
            "tier": cols["tier"],
            "community": community,
            "commitment_months": pd.array(cols["commitment_months"], dtype="Int64"),
            "price_basis": cols["price_basis"],
            "usd_per_gpu_hour": price,
            "sharding": configs.sharding[cfg],
            "per_gpu_gb": configs.per_gpu_gb[cfg],
            "verdict": configs.verdict[cfg],
            "headroom_gb": configs.headroom_gb[cfg],
            **_band_columns(table, wi, configs.per_gpu_gb[cfg]),
            "tokens_per_sec_per_gpu": configs.tokens_per_sec_per_gpu[cfg],
            "mfu": configs.mfu[cfg],
            "hours": hours,
            "run_cost_usd": np.round(costs["gpu_usd"], 2),
            "total_cost_usd": np.round(costs["total_usd"], 2),
            "cost_per_checkpoint_usd": costs["cost_per_checkpoint_usd"],
            "cost_terms": _cost_terms_json(costs, suffixes, sit_codes),
            "warnings": warnings,
            "price_snapshot_date": np.array([d for _, d in offers.stale_keys], dtype=object)[
                offers.stale_codes[rows]
            ],
            "observed_on": cols["observed_on"],
            "price_age_days": offers.age[rows],
            "excluded_by": [list(excluded_lists[c]) for c in broken_codes.tolist()],
            "region": cols["region"],
            **_preemption_columns(table, wi, spot, spot_rate, cols["bucket"]),
        },
        columns=list(RANKING_COLUMNS),
    )
