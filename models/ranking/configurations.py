"""The configurations each workload can run on: everything about an offer that does not depend on
its price.

Exists because memory fit, throughput, hours and node count depend only on (workload, card, GPUs
per offer, interruption class), not on the offer: computing them once per configuration and
joining them to the offers (join.py) is what keeps the ranking fast. A configuration is the offer
as sold (its ``gpu_count`` GPUs) or, for offers of whole 8-GPU nodes and workloads allowed to scale
out (``max_nodes > 1``), N such nodes. The memory model picks the least complex sharding that fits
(none, ZeRO-2, ZeRO-3); the throughput model gives tokens/s; sizing.py the hours and node count.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuprice.models.choices import GPUS_PER_NODE, SWEEP_STRATEGIES
from gpuprice.models.frameworks import runs_every_expert
from gpuprice.models.ranking.distinct import distinct_pairs
from gpuprice.models.ranking.offers import RISKS, Card
from gpuprice.models.ranking.sizing import choose_nodes, job_card, right_sized_hours
from gpuprice.models.ranking.workload_table import WorkloadTable
from gpuprice.models.throughput import (
    PCIE_BUSBW_GBS,
    compiled_kernels,
    gpu_profile,
    intra_node_busbw_gbs,
    predict_columns,
)

STRATEGIES = tuple(s for s in SWEEP_STRATEGIES if s != "offload")  # CPU offload's speed is not modelled


@dataclass(frozen=True)
class Configs:
    """Configurations the workloads can run on, as parallel arrays (one element per configuration).

    (workload, card, offer_gpu_count, risk) is unique: it is the key offers are joined on."""

    workload: np.ndarray  # index into WorkloadTable
    card: np.ndarray  # index into Offers.cards
    offer_gpu_count: np.ndarray  # GPUs per offer this configuration serves
    risk: np.ndarray  # interruption class it was chosen for (offers.RISKS)
    gpus: np.ndarray  # GPUs in the job (offer_gpu_count x nodes for scale-out)
    nodes: np.ndarray
    sharding: np.ndarray
    per_gpu_gb: np.ndarray
    tokens_per_sec_per_gpu: np.ndarray
    mfu: np.ndarray
    communication_share: np.ndarray
    hours: np.ndarray  # compute hours, right-sized (sizing.py)
    one_gpu_fits: np.ndarray
    pcie_collectives: np.ndarray
    verdict: np.ndarray  # fits / tight (models/fit_verdict.py; does_not_fit never gets here)
    headroom_gb: np.ndarray  # card - predicted device peak
    gpu_memory_gb: np.ndarray  # the card's usable 1e9 bytes

    def take(self, index: np.ndarray) -> Configs:
        return Configs(**{f: getattr(self, f)[index] for f in self.__dataclass_fields__})

    def __len__(self) -> int:
        return len(self.card)

    @staticmethod
    def concat(parts: Sequence[Configs]) -> Configs:
        return Configs(
            **{f: np.concatenate([getattr(p, f) for p in parts]) for f in Configs.__dataclass_fields__}
        )


def _memory_fit(
    workloads: WorkloadTable, members: np.ndarray, cards: Sequence[Card], counts: Sequence[int]
) -> dict[str, np.ndarray]:
    """Least complex fitting strategy per (workload, card, GPU count) for the workloads ``members``;
    entries only where something fits."""
    from gpuprice.models.catalog import usable_memory_gb
    from gpuprice.models.memory import fit_sweep

    # The card's usable 1e9 bytes (an "80 GB" A100 holds 85.9e9), as the predicted peaks count them.
    names = {f"{i}": usable_memory_gb(slug, memory) for i, (slug, memory) in enumerate(cards)}
    sweep = fit_sweep(
        [workloads.items[m].setup() for m in members.tolist()], names, sorted(set(counts)), STRATEGIES
    )
    best = sweep["least_complex"].to_numpy(dtype=bool)
    return {
        "workload": members[sweep["setup_index"].to_numpy(dtype=np.int64)[best]],
        "card": sweep["gpu"].to_numpy(dtype=object)[best].astype(np.int64),
        "gpus": sweep["gpu_count"].to_numpy(dtype=np.int64)[best],
        "sharding": sweep["sharding"].to_numpy(dtype=object)[best],
        "per_gpu_gb": sweep["per_gpu_gb"].to_numpy(dtype=float)[best],
        "verdict": sweep["verdict"].to_numpy(dtype=object)[best],
        "headroom_gb": sweep["headroom_gb"].to_numpy(dtype=float)[best],
        "gpu_memory_gb": sweep["gpu_memory_gb"].to_numpy(dtype=float)[best],
    }


def _fits(
    workloads: WorkloadTable, cards: Sequence[Card], offer_counts: list[int], max_gpus: int
) -> dict[str, np.ndarray]:
    """Every fitting (workload, card, GPU count): one memory sweep per node range, since only the
    workloads that scale out need the counts of whole nodes."""
    sells_nodes = GPUS_PER_NODE in offer_counts
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
            _memory_fit(workloads, np.array(members, dtype=np.int64), cards, [1, *offer_counts, *scale])
        )
    return {name: np.concatenate([sweep[name] for sweep in sweeps]) for name in sweeps[0]}


def _as_sold_and_scaled(
    workloads: WorkloadTable, fits: dict[str, np.ndarray], offer_counts: list[int], max_gpus: int
) -> tuple[np.ndarray, np.ndarray]:
    """Which fits are needed: (an offer as sold, whole 8-GPU nodes combined)."""
    w, gpus = fits["workload"], fits["gpus"]
    nodes = -(-gpus // GPUS_PER_NODE)
    # Offers sold in fixed sizes run as sold when the size meets min_nodes (beyond the job's GPU or
    # node limit they are kept, to be marked infeasible) ...
    scales_out = (GPUS_PER_NODE in offer_counts) & (workloads.max_nodes[w] > 1)
    as_sold = np.isin(gpus, offer_counts) & (nodes >= workloads.min_nodes[w]) & (gpus <= max_gpus)
    as_sold &= ~((gpus == GPUS_PER_NODE) & scales_out)
    # ... and whole 8-GPU nodes are combined into the node count the workload needs.
    scale = scales_out & (gpus % GPUS_PER_NODE == 0) & (nodes >= workloads.min_nodes[w])
    scale &= (nodes <= workloads.max_nodes[w]) & (gpus <= np.minimum(max_gpus, workloads.gpu_limit[w]))
    return as_sold, scale


def _fewest_gpus(group: np.ndarray, gpus: np.ndarray) -> np.ndarray:
    """True for the configuration with the fewest GPUs of each group: the baseline more GPUs must beat."""
    by_size = np.lexsort((gpus, group))
    _, first = np.unique(group[by_size], return_index=True)
    baseline = np.zeros(len(group), dtype=bool)
    baseline[by_size[first]] = True
    return baseline


def _throughput(
    workloads: WorkloadTable, cards: Sequence[Card], fits: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    from gpuprice.models.memory_setup import keeps_scores

    items, shapes, w = workloads.items, workloads.shapes, fits["workload"]
    attention = [_attention_inputs(x.setup(), float(x.arch().num_heads)) for x in items]

    def per(values: list[Any]) -> np.ndarray:
        return np.asarray(values)[w]

    return predict_columns(
        {
            "gpu": np.array([slug for slug, _ in cards], dtype=object)[fits["card"]],
            "gpus": fits["gpus"],
            "method": per([x.method for x in items]),
            "seq_len": per([x.seq_len for x in items]),
            "micro_batch": per([x.micro_batch for x in items]),
            "grad_checkpointing": per([x.uses_checkpointing for x in items]),
            # op-level selective checkpointing recomputes every second matmul of each block
            "selective_flops": per(
                [
                    shape.selective_recompute_flops() if x.checkpointing_mode == "selective" else 0.0
                    for x, shape in zip(items, shapes, strict=True)
                ]
            ),
            # torch.compile or a framework's own fused kernels (Unsloth) speed the job up
            "compile": per([compiled_kernels(x.compile, x.framework) for x in items]),
            "precision": per([x.precision for x in items]),
            "sharding": fits["sharding"],
            # transformers' Llama 4 computes every routed expert for every token
            "unrouted_params": per(
                [
                    shape.n_params - shape.n_active_params
                    if runs_every_expert(x.framework, x.arch().model_type)
                    else 0.0
                    for x, shape in zip(items, shapes, strict=True)
                ]
            ),
            "n_params": per([x.n_params for x in shapes]),
            "n_active_params": per([x.n_active_params for x in shapes]),
            "layers": per([x.layers for x in shapes]),
            "hidden": per([x.hidden for x in shapes]),
            "attn_width": per([x.attn_width for x in shapes]),
            # eager / explicit-score attention streams seq x seq scores through HBM
            "score_heads": per(
                [float(x.arch().num_heads) if keeps_scores(x.setup()) else 0.0 for x in items]
            ),
            # SDPA with a padding mask or fp32 inputs (models/throughput_attention.py)
            "masked_heads": per([a[0] for a in attention]),
            "mask_bytes": per([a[1] for a in attention]),
            "fp32_attention": per([a[2] for a in attention]),
            # PEFT's fp32 adapters on a bf16 base without autocast (models/throughput_adapters.py)
            "adapter_bytes": per([_adapter_bytes(x.setup()) for x in items]),
            # the optimizer step as estimate counts it: the job's optimizer, its framework's AdamW
            # kernel and gradient clip, on the row's sharding; once per grad_accum micro-batches
            "optimizer_bytes": _per_sharding(items, w, fits["sharding"], _optimizer_bytes),
            "grad_accum": per([float(x.setup().grad_accum) for x in items]),
            # hf QLoRA's fp32 residual stream (models/throughput_fp32_stream.py); none where the
            # sweep shards the 4-bit weights (trl skips the cast there)
            "stream_bytes": _per_sharding(items, w, fits["sharding"], _stream_bytes),
        }
    )


def _attention_inputs(setup: Any, heads: float) -> tuple[float, float, bool]:
    from gpuprice.models.memory_setup import keeps_scores
    from gpuprice.models.throughput_attention import attention_inputs

    return attention_inputs(
        setup.framework,
        setup.attention,
        setup.micro_batch,
        setup.precision,
        heads,
        keeps_scores(setup),
        setup.arch.model_type,
    )


def _adapter_bytes(setup: Any) -> float:
    from gpuprice.models.throughput_adapters import adapter_bytes_per_token, fp32_adapters

    if not fp32_adapters(setup.framework, setup.method, setup.precision):
        return 0.0
    return adapter_bytes_per_token(setup.arch, setup.lora_targets, setup.grad_checkpointing)


def _per_sharding(
    items: Sequence[Any], workload: np.ndarray, sharding: np.ndarray, value: Callable[[Any, str], float]
) -> np.ndarray:
    """``value(setup, sharding)`` for each row's workload and sharding, once per distinct pair."""
    pairs = np.array([f"{i}|{s}" for i, s in zip(workload, sharding, strict=True)], dtype=object)
    distinct, row_of = np.unique(pairs, return_inverse=True)
    values = []
    for pair in distinct:
        index, shard = str(pair).split("|")
        values.append(value(items[int(index)].setup(), shard))
    return np.asarray(values, dtype=float)[row_of]


def _optimizer_bytes(setup: Any, sharding: str) -> float:
    """The optimizer step as estimate counts it (throughput_recipe.optimizer_step_bytes): the job's
    optimizer, precision and framework (its AdamW kernel and gradient clip) on that sharding."""
    from gpuprice.models.frameworks import DEFAULTS
    from gpuprice.models.throughput_recipe import optimizer_step_bytes

    adamw_step = DEFAULTS[setup.framework].adamw_step
    return optimizer_step_bytes(setup.optimizer, adamw_step, setup.precision, setup.framework, sharding)


def _stream_bytes(setup: Any, sharding: str) -> float:
    from gpuprice.models.frameworks import qlora_fp32_stream
    from gpuprice.models.throughput_fp32_stream import fp32_stream_bytes_per_token

    if not qlora_fp32_stream(setup.framework, setup.method, setup.precision, sharding):
        return 0.0
    return fp32_stream_bytes_per_token(setup.arch, setup.lora_targets, setup.grad_checkpointing)


def _pcie_collectives(cards: Sequence[Card], card: np.ndarray, gpus: np.ndarray) -> np.ndarray:
    """Multi-GPU jobs whose GPUs exchange data over PCIe only (computed per distinct pair)."""
    limit = max(PCIE_BUSBW_GBS.values())
    of_row, pair_card, pair_gpus = distinct_pairs(card, gpus)
    flags = [
        count > 1 and intra_node_busbw_gbs(gpu_profile(cards[c][0]), min(count, GPUS_PER_NODE)) <= limit
        for c, count in zip(pair_card.tolist(), pair_gpus.tolist(), strict=True)
    ]
    return np.array(flags, dtype=bool)[of_row]


def _every_config(
    workloads: WorkloadTable, cards: Sequence[Card], fits: dict[str, np.ndarray], one_gpu_groups: np.ndarray
) -> Configs:
    """A configuration per fit, run as given (risk 0, offer_gpu_count = gpus): throughput and hours."""
    speed = _throughput(workloads, cards, fits)
    w, gpus = fits["workload"], fits["gpus"]
    group = job_card(w, fits["card"], len(cards))
    hours, tps, mfu = right_sized_hours(
        workloads.tokens[w], group, gpus, speed["tokens_per_sec_per_gpu"], speed["mfu"]
    )
    return Configs(
        workload=w,
        card=fits["card"],
        offer_gpu_count=gpus,
        risk=np.zeros(len(w), dtype=np.int64),
        gpus=gpus,
        nodes=-(-gpus // GPUS_PER_NODE),
        sharding=fits["sharding"],
        per_gpu_gb=fits["per_gpu_gb"],
        tokens_per_sec_per_gpu=tps,
        mfu=mfu,
        communication_share=speed["communication_share"],
        hours=hours,
        one_gpu_fits=np.isin(group, one_gpu_groups),
        pcie_collectives=_pcie_collectives(cards, fits["card"], gpus),
        verdict=fits["verdict"],
        headroom_gb=fits["headroom_gb"],
        gpu_memory_gb=fits["gpu_memory_gb"],
    )


def _per_risk(
    every: Configs, as_sold: np.ndarray, scale: np.ndarray, workloads: WorkloadTable, n_cards: int
) -> Configs:
    """Each needed configuration once per interruption class: as-sold ones unchanged, scale-out ones
    with the node count chosen for that class."""
    sold = every.take(np.flatnonzero(as_sold))
    parts = [dataclasses.replace(sold, risk=np.full(len(sold), r, dtype=np.int64)) for r in RISKS]
    candidates = np.flatnonzero(scale)
    for risk in RISKS:
        picked = every.take(choose_nodes(every, candidates, workloads, risk, n_cards))
        parts.append(
            dataclasses.replace(
                picked,
                offer_gpu_count=np.full(len(picked), GPUS_PER_NODE, dtype=np.int64),
                risk=np.full(len(picked), risk, dtype=np.int64),
            )
        )
    return Configs.concat(parts)


def configurations(
    workloads: WorkloadTable, cards: Sequence[Card], offer_counts: Sequence[int], max_gpus: int
) -> Configs | None:
    """Every (workload, card, offer GPU count, interruption class) that can run, with its node count."""
    counts = sorted({int(c) for c in offer_counts})
    fits = _fits(workloads, cards, counts, max_gpus)
    as_sold, scale = _as_sold_and_scaled(workloads, fits, counts, max_gpus)
    needed = as_sold | scale
    if not needed.any():
        return None
    group = job_card(fits["workload"], fits["card"], len(cards))
    one_gpu = (fits["gpus"] == 1) & (fits["sharding"] == "none")
    computed = needed | _fewest_gpus(group, fits["gpus"])  # the baseline of right-sizing
    every = _every_config(
        workloads, cards, {name: values[computed] for name, values in fits.items()}, group[one_gpu]
    )
    configs = _per_risk(every, as_sold[computed], scale[computed], workloads, len(cards))
    return configs if len(configs) else None
