"""Peak training memory per GPU: will this model, method and setup fit on that GPU?

    peak = weights + gradients + optimizer + activations + logits + overhead          (per GPU)

All sizes are GB = 1e9 bytes. Sources of every formula: ``/work/shared/reference/memory-formulas.md``
(copied facts are cited inline); the calibrated constants and the measured accuracy are in
``models/memory_calibration.md``.

* weights: trainable working copy (4 B fp32, 2 B bf16) + frozen base. Frozen base under
  ``bf16-mixed`` is the fp32 module plus the bf16 copies autocast saves for backward (litgpt /
  AMP semantics: 4 + 2 B); QLoRA stores block linears in NF4 (4.5 bits with an fp32 absmax per 64
  weights, 4.127 bits with double quantization, Dettmers et al. 2023) and keeps embeddings, head
  and norms in 16-bit.
* gradients: trainable parameters only (4 B under fp32/bf16-mixed, 2 B under bf16-true).
* optimizer: AdamW 8 B (2 x fp32) or 4 B (2 x bf16 under bf16-true), 8-bit AdamW 2 B plus one fp32
  scale per 2048 values, SGD momentum 4/2 B; ``bf16-mixed`` adds the 4 B fp32 master copy here
  (ZeRO counts it as optimizer state: K = 12). Paged 8-bit AdamW has the same steady-state size.
* activations: per layer from the saved tensors of a pre-norm block (hidden, q/k/v, attention
  output, MLP intermediates; gated MLPs keep four f-wide tensors). FlashAttention/SDPA is assumed,
  so there is no s^2 score term. Frozen linears do not keep their inputs (LoRA on q,v keeps fewer
  MLP tensors). K/V are counted at query width: SDPA paths repeat GQA heads before attention.
  Gradient checkpointing keeps each layer's input plus one layer being recomputed; that layer is
  rebuilt only after the loss's backward has freed the logits, so the peak holds the larger of the
  two moments, not their sum.
* logits: b s V x 12 B where the loss upcasts (fp32 log-softmax + its gradient + the input
  gradient at the start of backward), 6 B for a 16-bit loss, 2 B chunked, 0 fused; plus, for the
  reserved/device metrics under variable-length batches, one cached earlier loss region; plus
  the returned logits where the training loop keeps the model output through backward
  (``logits_kept``).
* optimizer step: weights + gradients + states + foreach AdamW's state-sized temporary, when that
  moment is larger than the backward peak. Eager attention: seq x seq scores per head, in the
  softmax-attention blocks only (a hybrid's Mamba / DeltaNet blocks keep none).
* overhead: CUDA context (visible to nvidia-smi, not to PyTorch's allocator counters), allocator
  fragmentation (a share of the pool forward and backward build; an optimizer step that needs more
  gets new segments of the size it asks for, which add none), NCCL/bucket buffers on multi-GPU
  jobs, QLoRA dequantization buffers.
* sharding over N GPUs: ZeRO-2 divides gradients and optimizer state by N; ZeRO-3/FSDP divide
  weights too and add the unsharded units in flight (current + prefetched block, and the current
  block's gradients); ``offload`` (ZeRO-3 with parameter and optimizer offload, FSDP CPU offload)
  keeps only the in-flight units on the GPU. Activations are never divided (data parallel).
  hf LoRA/QLoRA under FSDP with transformers' reentrant checkpointing: FSDP keeps every block's
  recomputed input and its gradient until backward ends (``reentrant_checkpointing``).

* frameworks (``models/frameworks.py``): loss kernel (whole fp32 logits, chunked, fused), eager vs
  fused elementwise kernels, the QLoRA path, FSDP2's sharded fp32 master, litgpt's separate LM
  head and whole-block FSDP gradients; activation checkpointing none / selective (op-level) /
  full; activation offloading; optimizer in backward.
* on a named card (``card_gb``): the cached loss regions and paged states give way before the card
  runs out, so reserved and nvidia-smi figures top out at the card; the device figure stays.
* gradient accumulation (default on): off, gradients take the memory backward frees
  (``zero_grad(set_to_none=True)``), so the peak holds max(gradients, activations + logits).

Over ~400 lines because this docstring is the model's formula sheet and the kernel, the scalar
estimate and the vectorised sweep must stay together to agree bit for bit.
The arithmetic lives in one NumPy kernel (:func:`_kernel`) that :func:`estimate_memory` runs on
scalars and :func:`fit_sweep` on whole grids, so both paths agree bit for bit. The per-setup
byte counts it combines (independent of GPU count and sharding) are in
:mod:`gpuprice.models.memory_features`; the setup and estimate types live in
:mod:`gpuprice.models.memory_setup`.

Over ~400 lines: most of it is this docstring (every formula and its source) and the one vectorised
kernel (``_kernel``) that the single estimate and the ranking's sweep both run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from gpuprice.errors import BadInput
from gpuprice.models.choices import (  # re-exported: callers import the vocabulary from here too
    LORA_TARGETS,
    MEMORY_METRICS,
    METHODS,
    OPTIMIZERS,
    PRECISIONS,
    SHARDINGS,
    SWEEP_STRATEGIES,
    LoraTargets,
    MemoryMetric,
    Method,
    Optimizer,
    Precision,
)
from gpuprice.models.fit_verdict import VERDICTS, planning_gb, verdict_codes
from gpuprice.models.memory_features import (  # NF4 sizes and lora_params re-exported
    FEATURE_NAMES,
    NF4_BYTES,
    NF4_DQ_BYTES,
    framework_arch,
    lora_params,
    setup_features,
)
from gpuprice.models.memory_setup import (  # re-exported: the public names of the memory model
    _STRATEGY_CODE,
    BREAKDOWN_TERMS,
    DEFAULT_CONSTANTS,
    GB,
    GIB,
    Breakdown,
    MemoryConstants,
    MemoryEstimate,
    Sharding,
    TrainingSetup,
    assumptions,
    one_line_error,
)

__all__ = [
    "BREAKDOWN_TERMS",
    "DEFAULT_CONSTANTS",
    "GB",
    "GIB",
    "LORA_TARGETS",
    "MEMORY_METRICS",
    "METHODS",
    "NF4_BYTES",
    "NF4_DQ_BYTES",
    "OPTIMIZERS",
    "PRECISIONS",
    "SHARDINGS",
    "SWEEP_COLUMNS",
    "SWEEP_STRATEGIES",
    "Breakdown",
    "LoraTargets",
    "MemoryConstants",
    "MemoryEstimate",
    "MemoryMetric",
    "Method",
    "Optimizer",
    "Precision",
    "PreparedSetups",
    "Sharding",
    "TrainingSetup",
    "assumptions",
    "estimate_memory",
    "fit_sweep",
    "lora_params",
    "one_line_error",
    "per_gpu_gb_many",
]


# DeepSpeed's ZeRO-3 steps its optimizer one sub-group of the partition at a time: zero_optimization
# sub_group_size, 1e9 elements by default (deepspeed runtime/zero/config.py).
DS_SUB_GROUP = 1e9


# ----- the kernel --------------------------------------------------------------------------------
def _kernel(
    f: Mapping[str, Any],
    gpus: Any,
    code: Any,
    c: MemoryConstants,
    fsdp: Any = False,
    card_gb: Any = np.inf,
) -> dict[str, Any]:
    """Per-GPU GB by term. Inputs broadcast against each other; same float64 ops for any shape.
    ``fsdp`` marks ``--sharding fsdp`` (same code as zero3; its sharded copy may differ).
    ``card_gb``: the card's usable 1e9 bytes (inf: no card), which bounds what gives way."""
    n = gpus.astype(np.float64)
    zero3 = code >= 2
    offload = code == 3
    ds_zero3 = (f["deepspeed"] > 0) & (code == 2) & ~np.asarray(fsdp, dtype=bool)
    # ZeRO-3/FSDP hold two gathered units in flight; DeepSpeed's ZeRO-3 on more than one GPU, with
    # the model built outside zero.Init, keeps every gathered linear weight whose forward built a
    # graph (memory_features._linears_kept)
    kept = np.where(ds_zero3 & (n > 1), f["linears_kept"], 0.0)
    inflight_w = np.where(zero3, np.maximum(2.0 * f["unit_w"], kept), 0.0)
    inflight_g = np.where(zero3, f["unit_g"], 0.0)
    # sharded QLoRA keeps its non-quantized weights 16-bit (memory_features._fp32_rest_bytes)
    sharded_state = (
        np.where(fsdp, f["train_w_fsdp"], f["train_w_sharded"]) + f["frozen_w"] - f["fp32_rest"]
    ) / n
    weights = (
        np.where(offload, 0.0, np.where(zero3, sharded_state, f["train_w"] + f["frozen_w"])) + inflight_w
    )
    # DeepSpeed ZeRO-3 (hf's zero3, not --sharding fsdp) keeps its 16-bit gradient partitions in
    # one buffer allocated at init (memory_features: ds_grad_partition): they persist, beside the
    # activations, and the fp32 gradients exist only at the step.
    ds_partition = np.where(ds_zero3, f["ds_grad_partition"] / n, 0.0)
    grads = (
        np.where(
            offload | ds_zero3,
            0.0,
            np.where(zero3, f["grads_sharded"] / n, np.where(code >= 1, f["grads"] / n, f["grads"])),
        )
        + inflight_g
    )
    optim = np.where(offload, 0.0, np.where(code >= 1, f["optim"] / n, f["optim"]))
    kept_per_layer = np.where(
        f["ac"] >= 2, f["act_ckpt"], np.where(f["ac"] >= 1, f["act_selective"], f["act_layer"])
    )
    # one block rebuilt during backward: the largest kind of a hybrid decoder (act_rebuilt)
    recomputed = np.where(f["ac"] >= 1, f["act_rebuilt"], 0.0)
    stored = c.activation_factor * f["layers"] * kept_per_layer
    # hf QLoRA's fp32 residual stream (memory_features): not under ZeRO-3/FSDP, where trl skips
    # prepare_model_for_kbit_training for sharded QLoRA (nothing is cast to fp32)
    stored = stored + np.where(zero3, 0.0, c.activation_factor * f["fp32_stream"])
    # Attention scores (eager / explicit-score models): every stored layer keeps them without
    # recomputation; with recomputation only the layer being rebuilt; plus one layer's backward.
    stored = stored + np.where(f["ac"] >= 1, 0.0, f["layers"] * f["scores"])
    rebuilt = (
        c.activation_factor * recomputed + np.where(f["ac"] >= 1, f["scores_rebuilt"], 0.0) + f["scores_bwd"]
    )
    logits = f["logits"]
    # With recomputation the rebuilt layer exists only while that layer's backward runs, after the
    # loss's backward has released the logits region: the peak holds the larger of the two moments
    # (the breakdown shows the rebuilt layer beyond the memory the loss freed). Without
    # recomputation every layer's tensors are alive at the loss: they add.
    activations = np.where(
        f["ac"] >= 1, stored + np.maximum(rebuilt - logits + f["logits_held"], 0.0), stored + rebuilt
    )
    # Frozen FSDP units under reentrant checkpointing around them keep every block's checkpointed
    # input and its gradient until backward ends (memory_features._frozen_units_keep_inputs): the
    # last block's backward holds the inputs twice and that block rebuilt, the loss long freed.
    # When that is the larger moment, the excess shows under activations.
    keeps_inputs = np.asarray(fsdp, dtype=bool) & zero3 & (f["ac"] >= 2) & (f["frozen_units_keep_inputs"] > 0)
    input_grads = c.activation_factor * f["layers"] * f["act_ckpt"]
    activations = activations + np.where(
        keeps_inputs,
        np.maximum(
            input_grads + rebuilt + f["logits_held"] - np.maximum(logits, rebuilt + f["logits_held"]), 0.0
        ),
        0.0,
    )
    # Without accumulation the gradients are allocated during backward while the saved activations
    # and the logits are released, so the peak holds the larger of the two; the breakdown then shows
    # only the gradients beyond the memory backward frees.
    grads = (
        np.where(f["accumulates"] > 0, grads, np.maximum(grads - activations - logits, 0.0)) + ds_partition
    )
    # DeepSpeed ZeRO allocates its gradient bucket (reduce_bucket_size, stage3.py's IPG buffer)
    # on every rank, even alone; the other frameworks' collectives need buffers only with peers.
    ds_zero = (f["deepspeed"] > 0) & (code >= 1) & ~np.asarray(fsdp, dtype=bool)
    buffers = c.qlora_dequant_layers * f["dequant"] + np.where((n > 1) | ds_zero, c.comm_buffer_gb * GB, 0.0)
    allocated = weights + grads + optim + activations + logits + buffers
    # The optimizer step runs after backward has freed the activations and the logits: weights,
    # every gradient, the states and the step's temporaries (sharded like the states). When that
    # is the larger moment, the breakdown shows the excess under overhead.
    step_temp = np.where(
        offload,
        0.0,
        np.where(code >= 1, np.where(fsdp, f["step_temp"], f["step_temp_sharded"]) / n, f["step_temp"]),
    )
    step_grads = np.where(
        offload, 0.0, np.where(zero3, f["grads_sharded"] / n, np.where(code >= 1, f["grads"] / n, f["grads"]))
    )
    # ZeRO-3's step: the persistent 16-bit partitions plus one sub-group's flattened copy and its
    # fp32 cast (DS_SUB_GROUP elements at most per GPU)
    ds_group = np.minimum(f["trainable"] / n, DS_SUB_GROUP) * f["ds_step_copy"]
    step_grads = np.where(ds_zero3, ds_partition + ds_group, step_grads)
    step_extra = np.maximum(
        weights + step_grads + optim + step_temp + buffers + f["logits_held"] - allocated, 0.0
    )
    allocated = allocated + step_extra
    # Batches of varying length: the caching allocator cannot merge the freed vocabulary-sized loss
    # blocks of a shorter step into the larger ones the longest step needs (blocks never merge
    # across segments), so the reserved pool keeps one earlier loss region beside the live one
    # (pytorch/devlogs "When does fragmentation occur in the CUDA caching allocator?", 2026;
    # NVIDIA-NeMo/NeMo#9061: dynamic batch shapes re-allocate every step). Not in allocated.
    cached = f["variable"] * logits
    # Fragmentation is a share of the pool that forward and backward build (allocated before the
    # optimizer step). What the step needs beyond that pool comes from new segments of the size
    # asked (c10/cuda/CUDACachingAllocator.cpp get_allocation_size: above 10 MB, rounded to 2 MB),
    # which add no free space inside them; so a step-dominated peak carries the backward pool's slack.
    pooled = allocated - step_extra
    slack = np.where(f["metric"] <= 1, c.fragmentation * pooled + cached, 0.0)
    context = np.where(f["metric"] == 0, c.cuda_context_gb * GB, 0.0)
    overhead = buffers + step_extra + slack + context
    per_gpu = weights + grads + optim + activations + logits + overhead
    # What must fit on the card whatever the metric reports: allocated + fragmentation + CUDA
    # context. Not the cached earlier loss regions: when cudaMalloc fails, the caching allocator
    # frees its unused cached blocks and retries (pytorch c10/cuda/CUDACachingAllocator.cpp,
    # malloc: release_cached_blocks() then alloc_block again), so they fill a larger card
    # (nvidia-smi and reserved show them) but do not make a smaller one run out.
    device = allocated + c.fragmentation * pooled + c.cuda_context_gb * GB
    # Paged optimizers (bitsandbytes): the states live in CUDA unified memory, which the driver
    # pages out to CPU RAM when the GPU runs short; one tensor's states are prefetched while its
    # update runs. What must stay resident is the rest (both the backward and the step moment hold
    # every state, so the same bytes leave either). per_gpu_gb keeps them: the peak if nothing
    # paged out. Outside the caching allocator, so no fragmentation on them.
    sharded_states = np.where(code >= 1, 1.0 / n, 1.0)
    paged = np.where(offload, 0.0, np.maximum(f["paged"] - f["paged_unit"], 0.0) * sharded_states)
    device = device - paged * (1.0 + c.fragmentation)
    # On a named card the two memories that give way cannot show more than the card holds: the
    # cached loss regions are freed and the allocation retried (above), paged states page out.
    # So reserved (which cannot see the CUDA context) and nvidia-smi top out at the card; what
    # stays (allocated + fragmentation + context) is the device figure, which the verdict judges.
    # The allocated counter holds neither, so it is not bounded.
    # The most the metric can read on the card: PyTorch's counters do not see the CUDA context.
    ceiling = np.asarray(card_gb, dtype=np.float64) * GB - np.where(
        f["metric"] >= 1, c.cuda_context_gb * GB, 0.0
    )
    over = np.maximum(per_gpu - ceiling, 0.0)
    gives_way = f["metric"] <= 1
    freed_cache = np.where(gives_way, np.minimum(cached, over), 0.0)
    paged_out = np.where(gives_way, np.minimum(paged * (1.0 + c.fragmentation), over - freed_cache), 0.0)
    slack, overhead = slack - freed_cache, overhead - freed_cache
    optim = optim - paged_out
    per_gpu = per_gpu - freed_cache - paged_out
    return {
        "weights": weights / GB,
        "gradients": grads / GB,
        "optimizer": optim / GB,
        "activations": activations / GB,
        "logits": logits / GB,
        "overhead": overhead / GB,
        "cuda_context": context / GB,
        "allocator_slack": slack / GB,
        "per_gpu": per_gpu / GB,
        "device": device / GB,
        "paged": (paged - paged_out / (1.0 + c.fragmentation)) / GB,
        "given_way": (freed_cache + paged_out) / GB,
        "ceiling": ceiling / GB,
        "step_excess": step_extra / GB,
    }


def estimate_memory(
    setup: TrainingSetup, constants: MemoryConstants = DEFAULT_CONSTANTS, card_gb: float | None = None
) -> MemoryEstimate:
    """Predicted peak memory per GPU (GB) with its breakdown; on a card of ``card_gb`` usable
    1e9 bytes, without the cached and paged memory that card would take back."""
    feats = {k: np.float64(v) for k, v in setup_features(setup).items()}
    out = _kernel(
        feats,
        np.int64(setup.gpus),
        np.int64(_STRATEGY_CODE[setup.sharding]),
        constants,
        np.bool_(setup.sharding == "fsdp"),
        np.inf if card_gb is None else np.float64(card_gb),
    )
    parts = {k: float(out[k]) for k in BREAKDOWN_TERMS}
    per_gpu = float(out["per_gpu"])
    given_way = float(out["given_way"])
    arch = framework_arch(setup)
    n_lora = lora_params(arch, setup.lora_rank, setup.lora_targets) if setup.method != "full" else 0
    notes = assumptions(setup)
    step_excess = float(out["step_excess"])
    if step_excess >= 0.05:  # the optimizer step is the peak moment (the breakdown is backward's)
        # the features count foreach AdamW's square-root list only where that step makes one
        temporaries = " (foreach AdamW's state-sized square-root list)" if feats["step_temp"] > 0 else ""
        notes += (
            f"peak at the optimizer step, {step_excess:.1f} GB above backward's: the weights, every "
            f"gradient, the optimizer states and the step's temporaries at once{temporaries}; the "
            "breakdown lists backward's terms with that excess under overhead",
        )
    if given_way > 0:
        notes += (
            f"on this {card_gb:g} GB card the allocator frees {given_way:.1f} GB of cached loss regions or "
            "paged optimizer states before it would run out, so per_gpu_gb tops out at the card",
        )
    return MemoryEstimate(
        per_gpu_gb=per_gpu,
        planning_gb=planning_gb(per_gpu, setup.margin),
        device_gb=float(out["device"]),
        paged_optimizer_gb=float(out["paged"]),
        margin=setup.margin,
        breakdown=Breakdown(**parts),
        cuda_context_gb=float(out["cuda_context"]),
        allocator_slack_gb=float(out["allocator_slack"]),
        assumptions=notes,
        given_way_gb=given_way,
        ceiling_gb=float(out["ceiling"]) if card_gb is not None else None,
        total_params=arch.n_params,
        trainable_params=arch.n_params if setup.method == "full" else n_lora,
        lora_params=n_lora,
        tokens_per_micro_batch=setup.seq_len * setup.micro_batch,
        gpus=setup.gpus,
        sharding=setup.sharding,
        memory_metric=setup.memory_metric,
    )


class PreparedSetups:
    """Many setups with their per-setup features computed once; :meth:`per_gpu_gb` then costs one
    vectorised kernel call per set of constants (calibration re-evaluates thousands of them)."""

    def __init__(
        self, setups: Sequence[TrainingSetup], cards_gb: Sequence[float | None] | None = None
    ) -> None:
        """``cards_gb``: each setup's card (usable 1e9 bytes; None: no card), as ``estimate_memory``."""
        rows = [setup_features(s) for s in setups]
        self.setups = list(setups)
        cards = [None] * len(self.setups) if cards_gb is None else list(cards_gb)
        self._cards = np.array([np.inf if card is None else card for card in cards], dtype=np.float64)
        self._feats = {k: np.array([r[k] for r in rows], dtype=np.float64) for k in FEATURE_NAMES}
        self._gpus = np.array([s.gpus for s in setups], dtype=np.int64)
        self._codes = np.array([_STRATEGY_CODE[s.sharding] for s in setups], dtype=np.int64)
        self._fsdp = np.array([s.sharding == "fsdp" for s in setups], dtype=bool)

    def per_gpu_gb(self, constants: MemoryConstants = DEFAULT_CONSTANTS) -> np.ndarray:
        return _kernel(self._feats, self._gpus, self._codes, constants, self._fsdp, self._cards)["per_gpu"]


def per_gpu_gb_many(
    setups: Sequence[TrainingSetup], constants: MemoryConstants = DEFAULT_CONSTANTS
) -> np.ndarray:
    """``estimate_memory(s).per_gpu_gb`` for many setups at once (each with its own gpus/sharding)."""
    return PreparedSetups(setups).per_gpu_gb(constants)


# ----- vectorised sweep --------------------------------------------------------------------------
SWEEP_COLUMNS = (
    "setup_index",
    "gpu",
    "gpu_count",
    "sharding",
    "per_gpu_gb",
    "planning_gb",
    "gpu_memory_gb",
    "fits",
    "headroom_gb",
    "least_complex",
    "verdict",
    "device_gb",
)


def _as_setup(item: TrainingSetup | Mapping[str, Any]) -> TrainingSetup:
    if isinstance(item, TrainingSetup):
        return item
    return TrainingSetup.checked(**dict(item))


def fit_sweep(
    setups: Sequence[TrainingSetup | Mapping[str, Any]],
    gpu_memory_gb: Mapping[str, float],
    gpu_counts: Sequence[int],
    strategies: Sequence[str] = SWEEP_STRATEGIES,
    constants: MemoryConstants = DEFAULT_CONSTANTS,
) -> pd.DataFrame:
    """Every setup x GPU x count x strategy, vectorised (the setups' own gpus/sharding are ignored).

    ``gpu_memory_gb`` holds each card's usable 1e9 bytes. ``verdict`` (fits / tight /
    does_not_fit, :mod:`gpuprice.models.fit_verdict`) judges the device figure; ``fits`` is
    ``verdict == "fits"``; ``headroom_gb`` = card - device figure. ``least_complex`` marks, per
    setup x GPU x count, the strategy with the best verdict (fits before tight), then the first in
    the order none, zero2, zero3/fsdp, offload; never a strategy that does not fit.
    Row order: setup, then GPU (mapping order), then count, then strategy (given order)."""
    unknown = [s for s in strategies if s not in _STRATEGY_CODE]
    if unknown:
        raise BadInput(f"unknown sharding strategy {unknown[0]!r}; valid: {', '.join(_STRATEGY_CODE)}")
    counts = [int(c) for c in gpu_counts]
    if any(c < 1 for c in counts):
        raise BadInput(f"gpu counts must be >= 1, got {counts}")
    resolved = [_as_setup(s) for s in setups]
    gpu_names = list(gpu_memory_gb)
    n_s, n_g, n_c, n_k = len(resolved), len(gpu_names), len(counts), len(strategies)
    if 0 in (n_s, n_g, n_c, n_k):
        return pd.DataFrame({col: [] for col in SWEEP_COLUMNS})

    rows = [setup_features(s) for s in resolved]
    feats = {k: np.array([r[k] for r in rows], dtype=np.float64).reshape(n_s, 1, 1, 1) for k in FEATURE_NAMES}
    gpus = np.array(counts, dtype=np.int64).reshape(1, 1, n_c, 1)
    codes = np.array([_STRATEGY_CODE[s] for s in strategies], dtype=np.int64).reshape(1, 1, 1, n_k)
    fsdp = np.array([s == "fsdp" for s in strategies], dtype=bool).reshape(1, 1, 1, n_k)
    cards = np.array([gpu_memory_gb[g] for g in gpu_names], dtype=np.float64).reshape(1, n_g, 1, 1)
    out = _kernel(feats, gpus, codes, constants, fsdp, cards)
    shape = (n_s, n_g, n_c, n_k)
    per_gpu = np.broadcast_to(out["per_gpu"], shape)
    margins = np.array([s.margin for s in resolved], dtype=np.float64).reshape(n_s, 1, 1, 1)
    planning = per_gpu / (1 - margins)
    memory = np.broadcast_to(cards, shape)
    # The verdict judges the device figure whatever metric per_gpu_gb reports (fit_verdict.py).
    device = np.broadcast_to(out["device"], shape)
    codes_v = np.broadcast_to(verdict_codes(device, memory, margins), shape)
    fits = codes_v == 0
    runnable = codes_v <= 1  # fits or tight: the predicted peak is within the card

    # least complex strategy per setup x GPU x count: the best verdict first (fits before tight),
    # then the lowest complexity code (ties: first given); only where the peak fits at all.
    rank = np.where(
        runnable,
        (codes_v * (4 * n_k) + codes * n_k + np.arange(n_k).reshape(1, 1, 1, n_k)),
        np.iinfo(np.int64).max,
    )
    best = rank.argmin(axis=3)
    least = np.zeros(shape, dtype=bool)
    np.put_along_axis(least, best[..., None], True, axis=3)
    least &= runnable

    frame = pd.DataFrame(
        {
            "setup_index": np.repeat(np.arange(n_s), n_g * n_c * n_k),
            "gpu": np.tile(np.repeat(np.array(gpu_names, dtype=object), n_c * n_k), n_s),
            "gpu_count": np.tile(np.repeat(np.array(counts), n_k), n_s * n_g),
            "sharding": np.tile(np.array(list(strategies), dtype=object), n_s * n_g * n_c),
            "per_gpu_gb": per_gpu.ravel(),
            "planning_gb": planning.ravel(),
            "gpu_memory_gb": memory.ravel(),
            "fits": fits.ravel(),
            "headroom_gb": (memory - device).ravel(),
            "least_complex": least.ravel(),
            "verdict": np.array(VERDICTS, dtype=object)[codes_v.ravel()],
            "device_gb": device.ravel(),
        }
    )
    return frame
