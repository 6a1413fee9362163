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
import itertools
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from models.cost import checkpoint_costs
from models.throughput import (
    PCIE_BUSBW_GBS,
    ModelShape,
    gpu_profile,
    intra_node_busbw_gbs,
    predict_frame,
)
from models.workloads import GPUS_PER_NODE, Workload

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
    "tokens_per_sec_per_gpu",
    "mfu",
    "hours",
    "run_cost_usd",
    "cost_per_checkpoint_usd",
    "cost_terms",
    "warnings",
    "price_snapshot_date",
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
    {*REQUIRED_OFFER_COLUMNS, "snapshot_date", "vram_gb", "commitment_months", "price_basis", "effective_from"}
)
STRATEGIES: tuple[str, ...] = ("none", "zero2", "zero3")  # CPU offload's speed is not modelled
RISKS: tuple[int, ...] = (0, 1, 2, 3)  # 2 x spot + community: the interruption classes of offers
STALE_AFTER_DAYS = 2  # warehouse.views: a provider's price is stale after two days
LONG_JOB_HOURS = 24.0  # "long job" for the no-ECC warning
LONG_SPOT_HOURS = 12.0  # a full fine-tune this long on spot needs frequent checkpoints ...
FREQUENT_CHECKPOINT_HOURS = 1.0  # ... at least hourly


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
    columns: dict[str, np.ndarray]  # provider, sku, gpu, tier, commitment_months, price_basis


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


def _usable_offers(offers: pd.DataFrame, day: dt.date) -> _Offers:
    """Offers that can be ranked: a catalog GPU, a positive price, in force on ``day``."""
    from models.catalog import gpu_slugs, load_gpu_catalog

    missing = [c for c in REQUIRED_OFFER_COLUMNS if c not in offers.columns]
    if missing:
        raise ValueError(f"rank_offers: offers lack columns {missing}")
    price = pd.to_numeric(offers["usd_per_gpu_hour"].astype("float64"), errors="coerce")
    effective = pd.to_datetime(_column(offers, "effective_from", None), errors="coerce")
    keep = (
        offers["gpu"].isin(gpu_slugs()).to_numpy()
        & (price > 0).to_numpy()
        & (pd.to_numeric(offers["gpu_count"], errors="coerce") >= 1).to_numpy()
        & ~(effective > pd.Timestamp(day)).to_numpy()
    )
    wanted = [c for c in offers.columns if c in _OFFER_COLUMNS_USED]
    frame = offers.loc[keep, wanted].reset_index(drop=True)  # source order breaks the last ties
    price = price.to_numpy(dtype=float)[keep]
    count = frame["gpu_count"].to_numpy(dtype=np.int64)

    # GB per GPU: the offer's figure when plausible (GH200 96/144 GB share a slug), else the catalog's.
    catalog_memory = load_gpu_catalog().set_index("slug")["memory_gb"]
    nominal = frame["gpu"].map(catalog_memory).to_numpy(dtype=float)
    stated = pd.to_numeric(_column(frame, "vram_gb", np.nan), errors="coerce").to_numpy(dtype=float)
    plausible = np.isfinite(stated) & (stated >= 0.5 * nominal) & (stated <= 2.0 * nominal)
    memory = np.round(np.where(plausible, stated, nominal), 1)
    gpu_codes, gpu_names = pd.factorize(frame["gpu"], sort=True)
    memories, memory_codes = np.unique(memory, return_inverse=True)
    key_values, key_codes = np.unique(gpu_codes.astype(np.int64) * len(memories) + memory_codes, return_inverse=True)
    keys = [(str(gpu_names[k // len(memories)]), float(memories[k % len(memories)])) for k in key_values.tolist()]

    date_codes, date_values = pd.factorize(_column(frame, "snapshot_date", day), sort=False, use_na_sentinel=False)
    dates = [_as_date(d) for d in date_values]
    provider_codes, providers = pd.factorize(frame["provider"], sort=False)
    stale_values, stale_codes = np.unique(provider_codes.astype(np.int64) * len(dates) + date_codes, return_inverse=True)
    stale_keys = [(str(providers[v // len(dates)]), dates[v % len(dates)]) for v in stale_values.tolist()]
    return _Offers(
        key_codes=key_codes,
        keys=keys,
        price=price,
        count=count,
        spot=(frame["tier"] == "spot").to_numpy(),
        community=frame["community"].fillna(False).astype(bool).to_numpy(),
        stale_codes=stale_codes,
        stale_keys=stale_keys,
        columns={
            "provider": frame["provider"].to_numpy(dtype=object),
            "sku": frame["sku"].to_numpy(dtype=object),
            "gpu": frame["gpu"].to_numpy(dtype=object),
            "tier": frame["tier"].to_numpy(dtype=object),
            "commitment_months": pd.to_numeric(_column(frame, "commitment_months", np.nan), errors="coerce")
            .to_numpy(dtype=float, na_value=np.nan),
            "price_basis": _column(frame, "price_basis", "list").fillna("list").to_numpy(dtype=object),
        },
    )


# ------------------------------------------------------------------ per-configuration facts
@dataclass(frozen=True)
class _Configs:
    """Configurations a workload can run on, as parallel arrays (one element per configuration)."""

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

    def take(self, index: np.ndarray) -> _Configs:
        return _Configs(**{f: getattr(self, f)[index] for f in self.__dataclass_fields__})

    def __len__(self) -> int:
        return len(self.key)


def _memory_fit(workload: Workload, keys: Sequence[tuple[str, float]], counts: Sequence[int]) -> dict[str, np.ndarray]:
    """Least complex fitting strategy per (key index, GPU count); entries only where something fits."""
    from models.memory import fit_sweep

    names = {f"{i}": memory for i, (_, memory) in enumerate(keys)}
    sweep = fit_sweep([workload.setup()], names, sorted(set(counts)), STRATEGIES)
    best = sweep["least_complex"].to_numpy(dtype=bool)
    return {
        "key": sweep["gpu"].to_numpy(dtype=object)[best].astype(np.int64),
        "gpus": sweep["gpu_count"].to_numpy(dtype=np.int64)[best],
        "sharding": sweep["sharding"].to_numpy(dtype=object)[best],
        "per_gpu_gb": sweep["per_gpu_gb"].to_numpy(dtype=float)[best],
    }


def _throughput(workload: Workload, keys: Sequence[tuple[str, float]], fits: dict[str, np.ndarray]) -> pd.DataFrame:
    shape = ModelShape.of(workload.arch())
    frame = pd.DataFrame(
        {
            "gpu": [keys[k][0] for k in fits["key"].tolist()],
            "gpus": fits["gpus"],
            "method": workload.method,
            "seq_len": workload.seq_len,
            "micro_batch": workload.micro_batch,
            "grad_checkpointing": workload.uses_checkpointing,
            "precision": workload.precision,
            "sharding": fits["sharding"],
            "n_params": shape.n_params,
            "n_active_params": shape.n_active_params,
            "layers": shape.layers,
            "hidden": shape.hidden,
            "attn_width": shape.attn_width,
        }
    )
    return predict_frame(frame)


def _configurations(
    workload: Workload, keys: Sequence[tuple[str, float]], offer_counts: Iterable[int], max_gpus: int
) -> _Configs | None:
    """Every (key, offer GPU count) the workload can run on, with the chosen node count."""
    offer_counts = sorted({int(c) for c in offer_counts})
    node_range = range(workload.min_nodes, min(workload.max_nodes, max_gpus // GPUS_PER_NODE) + 1)
    scale_out = np.array([n * GPUS_PER_NODE for n in node_range] if GPUS_PER_NODE in offer_counts else [], dtype=np.int64)
    fits = _memory_fit(workload, keys, sorted({1, *offer_counts, *scale_out.tolist()}))
    if fits["key"].size == 0:
        return None
    speed = _throughput(workload, keys, fits)
    tps = speed["tokens_per_sec_per_gpu"].to_numpy()
    hours = workload.training_tokens / (tps * fits["gpus"] * 3600.0)
    pcie_limit = max(PCIE_BUSBW_GBS.values())
    pcie = np.array(
        [
            g > 1 and intra_node_busbw_gbs(gpu_profile(keys[k][0]), min(g, GPUS_PER_NODE)) <= pcie_limit
            for k, g in zip(fits["key"].tolist(), fits["gpus"].tolist(), strict=True)
        ],
        dtype=bool,
    )
    one_gpu_keys = fits["key"][(fits["gpus"] == 1) & (fits["sharding"] == "none")]
    every = _Configs(
        key=fits["key"],
        offer_count=fits["gpus"],
        risk=np.zeros(len(fits["key"]), dtype=np.int64),
        gpus=fits["gpus"],
        nodes=-(-fits["gpus"] // GPUS_PER_NODE),
        sharding=fits["sharding"],
        per_gpu_gb=fits["per_gpu_gb"],
        tokens_per_sec_per_gpu=tps,
        mfu=speed["mfu"].to_numpy(),
        communication_share=speed["communication_share"].to_numpy(),
        hours=hours,
        one_gpu_fits=np.isin(fits["key"], one_gpu_keys),
        pcie_collectives=pcie,
    )

    # Offers sold in fixed sizes run as sold (when the size meets min_nodes), whatever their tier ...
    fixed = [c for c in offer_counts if not (c == GPUS_PER_NODE and scale_out.size)]
    fixed = [c for c in fixed if -(-c // GPUS_PER_NODE) >= workload.min_nodes and c <= max_gpus]
    as_sold = every.take(np.flatnonzero(np.isin(every.gpus, fixed)))
    parts = [dataclasses.replace(as_sold, risk=np.full(len(as_sold), risk, dtype=np.int64)) for risk in RISKS]
    # ... and whole 8-GPU nodes are combined into the node count the workload needs; spot and
    # community capacity lose time to interruptions, so their deadline may need more nodes.
    if scale_out.size:
        candidates = np.flatnonzero(np.isin(every.gpus, scale_out))
        for risk in RISKS:
            picked = every.take(_choose_nodes(every, candidates, workload, risk))
            count = len(picked)
            parts.append(
                dataclasses.replace(
                    picked,
                    offer_count=np.full(count, GPUS_PER_NODE, dtype=np.int64),
                    risk=np.full(count, risk, dtype=np.int64),
                )
            )
    configs = _Configs(**{f: np.concatenate([getattr(p, f) for p in parts]) for f in _Configs.__dataclass_fields__})
    return configs if len(configs) else None


def _choose_nodes(configs: _Configs, candidates: np.ndarray, workload: Workload, risk: int) -> np.ndarray:
    """Per key among ``candidates``: the fewest nodes whose expected wall time (start-up and
    interruptions included) meets the deadline, else the fastest."""
    if candidates.size == 0:
        return candidates
    hours = configs.hours[candidates]
    wall = checkpoint_costs(
        gpus=configs.gpus[candidates],
        nodes=configs.nodes[candidates],
        usd_per_gpu_hour=np.zeros(candidates.size),
        compute_hours=hours,
        checkpoints=_checkpoints(workload, hours),
        spot=np.full(candidates.size, risk >= 2),
        community=np.full(candidates.size, risk % 2 == 1),
        checkpoint_gb=0.0,
        model_gb=workload.model_download_gb(),
        dataset_gb=0.0,
        terms=workload.cost_terms,
    )["wall_hours"]
    deadline = workload.deadline_hours
    late = np.zeros(candidates.size, dtype=bool) if deadline is None else wall > deadline
    # Within a key: on-time ones first by GPU count; late ones after, fastest first.
    order = np.lexsort((np.where(late, wall, configs.gpus[candidates]), late, configs.key[candidates]))
    ordered = candidates[order]
    _, first = np.unique(configs.key[ordered], return_index=True)
    return ordered[first]


# ------------------------------------------------------------------ output helpers
def _checkpoints(workload: Workload, hours: np.ndarray) -> np.ndarray:
    per_checkpoint = workload.tokens_per_checkpoint
    if per_checkpoint is not None:
        count = max(1, math.ceil(workload.training_tokens / per_checkpoint - 1e-9))
        return np.full(len(hours), float(count))
    assert workload.checkpoint_interval_hours is not None
    return np.maximum(1.0, np.ceil(hours / workload.checkpoint_interval_hours - 1e-9))


def _config_warnings(
    workload: Workload, gpu: str, gpus: int, nodes: int, offer_count: int, *, ecc: bool, pcie: bool,
    comm_share: float, one_gpu_fits: bool, spot: bool, wall_hours: float, checkpoint_every: float,
) -> list[str]:
    """Warnings of one configuration and tier: short stable code, colon, one sentence."""
    out: list[str] = []
    if not ecc and wall_hours >= LONG_JOB_HOURS:
        out.append(f"no-ecc: {gpu} has no ECC memory; a {wall_hours:.0f} h job risks silent errors and has no support")
    if workload.method == "full" and pcie:
        out.append(
            f"pcie-multi-gpu: {gpus}x {gpu} exchange gradients over PCIe only; "
            f"{comm_share:.0%} of step time is communication in full fine-tuning"
        )
    if spot and workload.method == "full" and wall_hours >= LONG_SPOT_HOURS and checkpoint_every > FREQUENT_CHECKPOINT_HOURS:
        out.append(
            f"spot-long-run: spot capacity for a {wall_hours:.0f} h full fine-tune that checkpoints only every "
            f"{checkpoint_every:.1f} h; preemptions will redo work"
        )
    if offer_count >= GPUS_PER_NODE and nodes == 1 and one_gpu_fits:
        out.append(f"whole-node: renting {offer_count} GPUs although one {gpu} fits this workload")
    if workload.deadline_hours is not None and wall_hours > workload.deadline_hours:
        out.append(f"deadline-missed: {wall_hours:.0f} h expected against a {workload.deadline_hours:g} h deadline")
    return out


def _staleness_warnings(provider: str, price_date: dt.date | None, day: dt.date, stale: frozenset[str]) -> list[str]:
    out: list[str] = []
    if provider in stale:
        out.append(f"stale-provider: {provider}'s latest scrape failed or is more than {STALE_AFTER_DAYS} days old")
    if price_date is not None and (day - price_date).days > STALE_AFTER_DAYS:
        age = (day - price_date).days
        out.append(f"stale-price: price observed on {price_date.isoformat()}, {age} days before {day.isoformat()}")
    return out


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
) -> pd.DataFrame:
    """Every fitting offer x workload, ranked per workload by cost per checkpoint (ties: wall time).

    ``offers`` has the warehouse ``price_snapshots`` columns; offers with GPU ``unknown`` (or not in
    the catalog), without a positive price or with a scheduled future price are skipped. Returns
    exactly RANKING_COLUMNS; ``warnings`` holds one list of "code: text" strings per row.
    """
    day = _as_date(snapshot_date)
    if day is None:
        raise ValueError("rank_offers needs a snapshot_date")
    if offers.empty or not workloads:
        return _empty()
    usable = _usable_offers(offers, day)
    if usable.price.size == 0:
        return _empty()
    parts = [_rank_workload(usable, w, day, frozenset(stale_providers), max_gpus) for w in workloads]
    parts = [p for p in parts if p is not None]
    if not parts:
        return _empty()
    columns: dict[str, Any] = {}
    for name in RANKING_COLUMNS:
        pieces = [p[name] for p in parts]
        columns[name] = list(itertools.chain.from_iterable(pieces)) if isinstance(pieces[0], list) else np.concatenate(pieces)
    columns["commitment_months"] = pd.array(columns["commitment_months"], dtype="Int64")
    return pd.DataFrame(columns, columns=list(RANKING_COLUMNS))


def _rank_workload(
    offers: _Offers, workload: Workload, day: dt.date, stale: frozenset[str], max_gpus: int
) -> dict[str, Any] | None:
    """One workload's ranked rows as columns (arrays and lists), or None when nothing fits."""
    found = _configurations(workload, offers.keys, np.unique(offers.count), max_gpus)
    if found is None:
        return None

    # Offer -> configuration through one integer key (key code, count, interruption class),
    # sorted for searchsorted.
    width = int(max(offers.count.max(), found.offer_count.max())) + 1
    config_keys = (found.key * width + found.offer_count) * len(RISKS) + found.risk
    order = np.argsort(config_keys, kind="stable")
    configs, config_keys = found.take(order), config_keys[order]
    offer_risk = 2 * offers.spot.astype(np.int64) + offers.community.astype(np.int64)
    offer_keys = (offers.key_codes.astype(np.int64) * width + offers.count) * len(RISKS) + offer_risk
    position = np.clip(np.searchsorted(config_keys, offer_keys), 0, len(config_keys) - 1)
    rows = np.flatnonzero(config_keys[position] == offer_keys)
    if rows.size == 0:
        return None
    cfg = position[rows]

    gpus = configs.gpus[cfg].astype(float)
    nodes = configs.nodes[cfg].astype(float)
    hours = configs.hours[cfg]
    price = offers.price[rows]
    spot = offers.spot[rows]
    community = offers.community[rows]
    checkpoints = _checkpoints(workload, hours)
    facts = _WorkloadFacts.of(workload)
    costs = checkpoint_costs(
        gpus=gpus,
        nodes=nodes,
        usd_per_gpu_hour=price,
        compute_hours=hours,
        checkpoints=checkpoints,
        spot=spot,
        community=community,
        checkpoint_gb=facts.checkpoint_gb,
        model_gb=facts.model_gb,
        dataset_gb=facts.dataset_gb,
        terms=workload.cost_terms,
    )

    # Cheapest per checkpoint first; ties by expected wall time, then the offers' own order
    # (offers_as_of sorts by provider, SKU, count, tier) so the ranking is deterministic.
    ranking = np.lexsort((rows, costs["wall_hours"], np.round(costs["cost_per_checkpoint_usd"], 6)))
    rows, cfg, gpus, nodes, hours, price, spot, community, checkpoints = (
        a[ranking] for a in (rows, cfg, gpus, nodes, hours, price, spot, community, checkpoints)
    )
    costs = {name: values[ranking] for name, values in costs.items()}

    # Price-independent facts are shared by every offer of one situation: configuration x spot x
    # community (cost terms, configuration warnings) and provider x price date (staleness).
    situation = (cfg.astype(np.int64) * 2 + spot) * 2 + community
    _, first_row, sit_codes = np.unique(situation, return_index=True, return_inverse=True)
    config_warnings, suffixes = [], []
    for row in first_row:
        c = int(cfg[row])
        gpu = offers.keys[int(configs.key[c])][0]
        config_warnings.append(
            _config_warnings(
                workload, gpu, int(gpus[row]), int(nodes[row]), int(configs.offer_count[c]),
                ecc=_ecc(gpu), pcie=bool(configs.pcie_collectives[c]),
                comm_share=float(configs.communication_share[c]),
                one_gpu_fits=bool(configs.one_gpu_fits[c]), spot=bool(spot[row]),
                wall_hours=float(costs["wall_hours"][row]), checkpoint_every=float(hours[row] / checkpoints[row]),
            )
        )
        suffixes.append(_cost_terms_suffix(facts, costs, checkpoints, row))
    stale_warnings = [_staleness_warnings(p, d, day, stale) for p, d in offers.stale_keys]
    # One warning list per distinct (situation, staleness) pair, copied per row (rows own their lists).
    pair = sit_codes.astype(np.int64) * len(stale_warnings) + offers.stale_codes[rows]
    pairs, pair_codes = np.unique(pair, return_inverse=True)
    pair_lists = [config_warnings[p // len(stale_warnings)] + stale_warnings[p % len(stale_warnings)] for p in pairs.tolist()]
    per_row_warnings = [list(pair_lists[p]) for p in pair_codes.tolist()]
    cost_terms = _cost_terms_json(costs, suffixes, sit_codes)

    cols = {name: values[rows] for name, values in offers.columns.items()}
    return {
        "snapshot_date": np.full(len(rows), day, dtype=object),
        "workload": np.full(len(rows), workload.name, dtype=object),
        "rank": np.arange(1, len(rows) + 1, dtype=np.int64),
        "provider": cols["provider"],
        "sku": cols["sku"],
        "gpu": cols["gpu"],
        "gpu_count": gpus.astype(np.int64),
        "nodes": nodes.astype(np.int64),
        "tier": cols["tier"],
        "community": community,
        "commitment_months": cols["commitment_months"],
        "price_basis": cols["price_basis"],
        "usd_per_gpu_hour": price,
        "sharding": configs.sharding[cfg],
        "per_gpu_gb": configs.per_gpu_gb[cfg],
        "tokens_per_sec_per_gpu": configs.tokens_per_sec_per_gpu[cfg],
        "mfu": configs.mfu[cfg],
        "hours": hours,
        "run_cost_usd": np.round(costs["gpu_usd"], 2),
        "cost_per_checkpoint_usd": costs["cost_per_checkpoint_usd"],
        "cost_terms": cost_terms,
        "warnings": per_row_warnings,
        "price_snapshot_date": np.array([d for _, d in offers.stale_keys], dtype=object)[offers.stale_codes[rows]],
    }


def _ecc(gpu: str) -> bool:
    from models.catalog import get_gpu

    return get_gpu(gpu).ecc


@dataclass(frozen=True)
class _WorkloadFacts:
    """Per-workload constants of the cost terms (computed once per ranking)."""

    checkpoint_gb: float
    dataset_gb: float
    model_gb: float
    assumptions_json: str  # only the cost terms this workload overrides (defaults: models.cost.CostTerms)

    @classmethod
    def of(cls, workload: Workload) -> _WorkloadFacts:
        overrides = workload.cost_terms.model_dump(mode="json", exclude_defaults=True)
        return cls(
            checkpoint_gb=workload.checkpoint_gb(),
            dataset_gb=workload.dataset_gb(),
            model_gb=workload.model_download_gb(),
            assumptions_json=json.dumps(overrides, separators=(",", ":"), sort_keys=True),
        )


def _cost_terms_suffix(facts: _WorkloadFacts, costs: dict[str, np.ndarray], checkpoints: np.ndarray, row: int) -> str:
    """The price-independent part of one situation's cost_terms JSON (after the per-row amounts).

    Kept short on purpose: it is repeated on every row. The assumptions behind the numbers are the
    workload's cost terms (``gpuprice workloads --json``); only its overrides are repeated here.
    """
    value = {name: float(costs[name][row]) for name in costs}
    compute = value["wall_hours"] - value["orchestration_hours"] - value["rework_hours"]
    return (
        f',"storage_usd":{value["storage_usd"]:.2f},"data_usd":{value["data_usd"]:.2f}'
        f',"engineer_usd":{value["engineer_usd"]:.2f},"reusable_value_usd":{value["reusable_value_usd"]:.2f}'
        f',"checkpoints":{int(checkpoints[row])},"compute_hours":{compute:.4f}'
        f',"orchestration_hours":{value["orchestration_hours"]:.4f},"rework_hours":{value["rework_hours"]:.4f}'
        f',"wall_hours":{value["wall_hours"]:.4f},"expected_interruptions":{value["expected_interruptions"]:.4g}'
        f',"checkpoint_gb":{facts.checkpoint_gb:.3f},"dataset_gb":{facts.dataset_gb:.3f}'
        f',"model_download_gb":{facts.model_gb:.3f},"assumptions":{facts.assumptions_json}}}'
    )


def _cost_terms_json(costs: dict[str, np.ndarray], suffixes: list[str], situation_codes: np.ndarray) -> list[str]:
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
