"""Training throughput: tokens per second per GPU for a model, method, GPU and parallel layout.

    tokens/s/GPU = 1 / (time per token), where one token costs
      compute   hardware FLOPs / (peak dense BF16 x efficiency)
    + dequant   QLoRA: the 4-bit base is expanded to 16-bit on every pass (memory-bound)
    + overhead  a fixed cost per layer and micro-batch (kernel launches, sync points)
    + optimizer the optimizer step (memory-bound: bytes per parameter through HBM), once per
                optimizer step of micro_batch x seq x grad_accum tokens
    + exposed   gradient/parameter communication that compute could not hide: ZeRO-3/FSDP
                gathers and reduce-scatters every micro-batch, DDP all-reduces and ZeRO-2
                all-gathers the updated parameters once per optimizer step
    all stretched by a small loss per doubling of the node count (multi-node jobs).

FLOPs convention (reference: cost-model.md, llm-foundry's MFU definition):
- model FLOPs per token = 6 N (full training, N = *active* parameters for MoE) or 4 N (LoRA/QLoRA:
  the frozen base needs input gradients but no weight gradients), plus attention
  6 L s (q_width + v_width) = 12 L h s for a standard block.
- activation checkpointing recomputes one forward: + 2 N + 4 L h s hardware FLOPs.
- ``mfu`` = model FLOPs x tokens/s / peak, i.e. on the 6N (4N for adapters) basis *including* the
  attention term and *excluding* recomputation; ``hfu`` counts the recomputation too.

The efficiency is a handful of physically meaningful numbers (:class:`ThroughputParameters`),
calibrated once on ``throughput_public.csv`` (see ``models/mfu_calibration.md``), never per row.
GPU facts are in :mod:`gpuprice.models.gpu_hardware`, the constants in
:mod:`gpuprice.models.throughput_parameters`, benchmark parsing and the fit in
:mod:`gpuprice.models.calibration.throughput_rows`. Why this module is over ~400 lines: the scalar
prediction and the vectorised frame path (the ranking's million-row sweep) build the same
:class:`Cases` for one :func:`evaluate`, and are kept side by side so they cannot drift.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from gpuprice.errors import BadInput
from gpuprice.models.choices import METHODS, SHARDINGS
from gpuprice.models.gpu_hardware import (  # re-exported: callers import the hardware facts from here too
    ALL_FAMILIES,
    FAMILY_CODE,
    GPUS_PER_NODE,
    PCIE_BUSBW_GBS,
    GpuProfile,
    collective_busbw_gbs,
    gpu_profile,
    intra_node_busbw_gbs,
)
from gpuprice.models.throughput_parameters import (
    CALIBRATED_PARAMETERS,
    PRIOR_PARAMETERS,
    ThroughputParameters,
)

__all__ = [
    "ALL_FAMILIES",
    "CALIBRATED_PARAMETERS",
    "PCIE_BUSBW_GBS",
    "PRIOR_PARAMETERS",
    "GpuProfile",
    "ModelShape",
    "Throughput",
    "ThroughputParameters",
    "collective_busbw_gbs",
    "gpu_profile",
    "intra_node_busbw_gbs",
    "predict_columns",
    "predict_frame",
    "predict_throughput",
]

# "model_parallel" (Megatron TP/PP) only occurs in benchmark rows; the product shards with ZeRO/FSDP.
Sharding = Literal["none", "zero2", "zero3", "fsdp", "model_parallel"]

# Bytes moved per parameter per GPU (before the (n-1)/n ring factor), BF16 comms, split into what
# happens every micro-batch and what happens once per optimizer step (gradient accumulation):
#   full + zero3/fsdp: all-gather for forward and backward + reduce-scatter of gradients, every
#     micro-batch (DeepSpeed ZeRO-3 and FSDP reduce each micro-batch's gradients) = 2+2+2
#   full + zero2: reduce-scatter of gradients every micro-batch (DeepSpeed reduces into the fp32
#     partition each micro-step) + all-gather of the updated parameters once per step = 2 | 2
#   full + none (DDP): ring all-reduce (the gradients twice) once per step: HF Trainer/accelerate
#     and torchrun loops skip the sync on accumulation micro-batches (DDP.no_sync) = 0 | 2+2
#   adapters + zero3/fsdp: the frozen base is gathered for forward and backward (2 x weight bytes)
#   adapters otherwise: only the adapters' gradients (negligible)
_FULL_COMM_BYTES = {"zero3": 6.0, "fsdp": 6.0, "zero2": 2.0, "none": 0.0, "model_parallel": 0.0}
_FULL_STEP_COMM_BYTES = {"zero3": 0.0, "fsdp": 0.0, "zero2": 2.0, "none": 4.0, "model_parallel": 0.0}
# Optimizer-state sharding: the step updates 1/n of the parameters on each GPU.
SHARDED_STATES = frozenset({"zero2", "zero3", "fsdp", "model_parallel"})

# HBM bytes per trainable parameter in one optimizer step (fp32 states; half for bf16-true),
# counted from the kernels each implementation launches (torch 2.x torch/optim/adam.py):
#   foreach AdamW (_multi_tensor_adam, torch.optim.AdamW's default on CUDA): weight decay
#     mul_ (r4 w4), lerp_ of exp_avg (r8 w4), mul_ + addcmul_ of exp_avg_sq (r4 w4, r8 w4),
#     sqrt / div_ / add_ eps on a temporary list (r4 w4 each), addcdiv_ into the parameter
#     (r12 w4): 80 B
#   fused AdamW (one kernel): read param, grad, exp_avg, exp_avg_sq, write three: 28 B
#   8-bit AdamW (bitsandbytes, one kernel, 1-byte states): 4+4+1+1 read, 4+1+1 written: 16 B
#   SGD with momentum (foreach): mul_ + add_ of the buffer, add_ into the parameter: 28 B
# plus the gradient-norm clip every trainer runs by default (max_grad_norm 1.0): reads every
# gradient once more, 4 B.
OPTIMIZER_STEP_BYTES = {
    ("adamw", "foreach"): 80.0,
    ("adamw", "fused"): 28.0,
    ("adamw8bit", "foreach"): 16.0,
    ("adamw8bit", "fused"): 16.0,
    ("paged_adamw8bit", "foreach"): 16.0,
    ("paged_adamw8bit", "fused"): 16.0,
    ("sgd", "foreach"): 28.0,
    ("sgd", "fused"): 28.0,
}
GRAD_CLIP_BYTES = 4.0
NF4_BYTES_PER_PARAM = 0.5625  # 4 bits + one fp32 absmax per 64 weights (QLoRA paper)
# HBM bytes per attention score under eager attention (transformers' eager_attention_forward),
# forward and forward + backward; see evaluate().
EAGER_SCORE_FORWARD_BYTES = 26.0
EAGER_SCORE_TRAFFIC_BYTES = 60.0


# --------------------------------------------------------------------------- the model core
@dataclass
class Cases:
    """A batch of configurations as parallel numpy arrays (one element per configuration)."""

    n_params: np.ndarray  # total parameters (all experts): communication and dequantisation
    n_active: np.ndarray  # parameters one token touches: FLOPs
    layers: np.ndarray
    hidden: np.ndarray
    attn_width: np.ndarray  # (q width + v width) / 2 = hidden for standard attention
    seq_len: np.ndarray
    micro_batch: np.ndarray
    full: np.ndarray  # bool: full training (else LoRA/QLoRA)
    qlora: np.ndarray  # bool
    checkpointing: np.ndarray  # bool
    compiled: np.ndarray  # bool: torch.compile or a framework's fused kernels (Unsloth)
    precision_factor: np.ndarray  # 1 = BF16/FP16, 0.5 = FP32 (TF32), -1 marks FP8 (gain applied if supported)
    peak_flops: np.ndarray  # FLOP/s
    has_fp8: np.ndarray  # bool
    memory_bw: np.ndarray  # bytes/s
    family: np.ndarray  # int codes into ALL_FAMILIES
    gpus: np.ndarray
    busbw: np.ndarray  # bytes/s for the job's collectives
    comm_bytes_per_param: np.ndarray  # per micro-batch per GPU before the ring factor
    # Attention heads whose seq x seq scores go through HBM (eager / explicit-score attention), 0
    # for fused kernels (FlashAttention / SDPA keep the scores in on-chip memory).
    score_heads: np.ndarray | None = None
    # Micro-batches per optimizer step (None: 1), HBM bytes per trainable parameter of one
    # optimizer step (None: foreach AdamW on fp32 states, see OPTIMIZER_STEP_BYTES), and the bytes
    # per parameter communicated once per optimizer step (None: none).
    grad_accum: np.ndarray | None = None
    optimizer_bytes: np.ndarray | None = None
    step_comm_bytes_per_param: np.ndarray | None = None
    # bool: optimizer states sharded over the GPUs (ZeRO-2/3, FSDP, Megatron), None: not sharded
    sharded_states: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.n_params)


@dataclass
class CaseResult:
    tokens_per_sec_per_gpu: np.ndarray
    mfu: np.ndarray
    hfu: np.ndarray
    flops_per_token: np.ndarray
    hardware_flops_per_token: np.ndarray
    communication_share: np.ndarray  # share of step time spent in exposed communication
    dequant_share: np.ndarray
    optimizer_share: np.ndarray  # share of step time in the optimizer step
    overhead_share: np.ndarray  # share of step time in the fixed per-layer cost
    eager_share: np.ndarray  # share of step time streaming eager attention scores through HBM


def evaluate(cases: Cases, params: ThroughputParameters = CALIBRATED_PARAMETERS) -> CaseResult:
    """Vectorised throughput for every configuration in ``cases``."""
    family_eff = np.array([params.efficiency_of(f) for f in ALL_FAMILIES])[cases.family]

    n_active, layers, seq = cases.n_active, cases.layers, cases.seq_len
    attn = 12.0 * layers * cases.attn_width * seq  # per token, forward + backward (6 L s (q + v))
    dense = np.where(cases.full, 6.0, 4.0) * n_active
    recompute_dense = np.where(cases.checkpointing, 2.0 * n_active, 0.0)
    recompute_attn = np.where(cases.checkpointing, attn / 3.0, 0.0)

    fp8 = cases.precision_factor < 0
    precision = np.where(fp8, np.where(cases.has_fp8, params.fp8_speedup, 1.0), cases.precision_factor)
    efficiency = (
        family_eff
        * cases.hidden
        / (cases.hidden + params.half_width)
        * precision
        * np.where(cases.full, 1.0, params.lora_efficiency)
        * np.where(cases.compiled, params.compile_speedup, 1.0)
    )
    rate = cases.peak_flops * efficiency
    attention_rate = (
        rate
        * params.attention_efficiency
        * np.where(_NEW_MMA[cases.family], params.hopper_attention_factor, 1.0)
    )
    compute = (dense + recompute_dense) / rate + (attn + recompute_attn) / attention_rate

    tokens_mb = cases.micro_batch * seq
    overhead = params.layer_overhead_ms * 1e-3 * layers / tokens_mb
    # Eager attention streams every score through HBM: forward writes Q K^T, scales, masks, runs an
    # fp32 softmax and casts (26 B per score: 2 written, 2+2, 2+2, 2+4, 4+2 read+written, 2 read
    # by P V); backward reads and writes the 16-bit and fp32 gradients (34 B); recomputation
    # repeats the forward. Memory-bound: bytes / HBM bandwidth, per token L x heads x s x bytes.
    heads = cases.score_heads if cases.score_heads is not None else np.zeros_like(layers)
    score_bytes = EAGER_SCORE_TRAFFIC_BYTES + np.where(cases.checkpointing, EAGER_SCORE_FORWARD_BYTES, 0.0)
    eager = layers * heads * seq * score_bytes / cases.memory_bw
    passes = 2.0 + cases.checkpointing
    dequant = np.where(
        cases.qlora,
        passes * params.dequant_bytes_per_param * cases.n_params / (cases.memory_bw * tokens_mb),
        0.0,
    )
    # Once per optimizer step (micro_batch x seq x grad_accum tokens per GPU): the optimizer's
    # memory-bound pass over the trainable parameters this GPU updates, and the per-step
    # collectives. Adapters' few parameters are left out (their step is ~1e-3 of a full one).
    accum = cases.grad_accum if cases.grad_accum is not None else np.ones_like(layers)
    tokens_step = tokens_mb * accum
    step_bytes = cases.optimizer_bytes if cases.optimizer_bytes is not None else np.full_like(layers, 84.0)
    sharded = cases.sharded_states if cases.sharded_states is not None else np.zeros_like(layers, dtype=bool)
    local = np.where(sharded, cases.n_params / np.maximum(cases.gpus, 1.0), cases.n_params)
    optimizer = np.where(cases.full, step_bytes * local / (cases.memory_bw * tokens_step), 0.0)
    ring = np.where(cases.gpus > 1, (cases.gpus - 1) / np.maximum(cases.gpus, 1), 0.0)
    step_comm = cases.step_comm_bytes_per_param if cases.step_comm_bytes_per_param is not None else 0.0
    comm = cases.comm_bytes_per_param * cases.n_params * ring / (
        cases.busbw * tokens_mb
    ) + step_comm * cases.n_params * ring / (cases.busbw * tokens_step)
    # Overlap rule (one for both): collectives run on their own stream beside the backward's
    # matmuls, and hide behind at most comm_overlap of the compute time; the rest is exposed.
    exposed = np.maximum(0.0, comm - params.comm_overlap * (compute + dequant))

    nodes = np.ceil(cases.gpus / GPUS_PER_NODE)
    stretch = 1.0 + params.node_scaling_loss * np.log2(np.maximum(nodes, 1.0))
    seconds = (compute + overhead + dequant + eager + optimizer + exposed) * stretch

    tokens = 1.0 / seconds
    model_flops = dense + attn
    hardware_flops = model_flops + recompute_dense + recompute_attn
    return CaseResult(
        tokens_per_sec_per_gpu=tokens,
        mfu=tokens * model_flops / cases.peak_flops,
        hfu=tokens * hardware_flops / cases.peak_flops,
        flops_per_token=model_flops,
        hardware_flops_per_token=hardware_flops,
        communication_share=exposed * stretch / seconds,
        dequant_share=dequant * stretch / seconds,
        optimizer_share=optimizer * stretch / seconds,
        overhead_share=overhead * stretch / seconds,
        eager_share=eager * stretch / seconds,
    )


# FlashAttention-3 paper (Shah et al. 2024): FlashAttention-2 reaches ~35 % of H100 peak against
# 50-73 % of A100 peak, because it does not use Hopper's asynchronous MMA/TMA units.
_NEW_MMA = np.array([family in ("hopper", "blackwell") for family in ALL_FAMILIES])


# --------------------------------------------------------------------------- inputs -> cases
_PRECISION_FACTORS = {"fp32": 0.5, "bf16-mixed": 1.0, "bf16-true": 1.0, "fp16-mixed": 1.0, "fp8": -1.0}


def precision_factor(precision: str) -> float:
    """Compute-rate factor of a precision regime (TF32 runs at half the BF16 tensor rate)."""
    try:
        return _PRECISION_FACTORS[precision]
    except KeyError:
        raise BadInput(f"unknown precision {precision!r}; valid: {', '.join(_PRECISION_FACTORS)}") from None


def comm_bytes_per_param(method: str, sharding: str, precision: str) -> float:
    """Bytes per parameter each GPU exchanges per micro-batch (see _FULL_COMM_BYTES)."""
    scale = 2.0 if precision == "fp32" else 1.0
    if method == "full":
        return _FULL_COMM_BYTES[sharding] * scale
    if sharding in ("zero3", "fsdp"):
        weight_bytes = NF4_BYTES_PER_PARAM if method == "qlora" else 2.0 * scale
        return 2.0 * weight_bytes
    return 0.0


def step_comm_bytes_per_param(method: str, sharding: str, precision: str) -> float:
    """Bytes per parameter each GPU exchanges once per optimizer step (see _FULL_STEP_COMM_BYTES)."""
    scale = 2.0 if precision == "fp32" else 1.0
    return _FULL_STEP_COMM_BYTES[sharding] * scale if method == "full" else 0.0


def optimizer_step_bytes(
    optimizer: str = "adamw", adamw_step: str = "foreach", precision: str = "bf16-mixed"
) -> float:
    """HBM bytes per trainable parameter of one optimizer step, gradient clipping included
    (OPTIMIZER_STEP_BYTES; 16-bit states under bf16-true move half the bytes)."""
    try:
        base = OPTIMIZER_STEP_BYTES[(optimizer, adamw_step)]
    except KeyError:
        valid = sorted({o for o, _ in OPTIMIZER_STEP_BYTES})
        raise BadInput(f"unknown optimizer {optimizer!r}; valid: {', '.join(valid)}") from None
    states = 0.5 if precision == "bf16-true" and not optimizer.endswith("8bit") else 1.0
    return base * states + GRAD_CLIP_BYTES * states


@dataclass(frozen=True)
class ModelShape:
    """The parts of an architecture the throughput model uses."""

    n_params: float
    n_active_params: float
    layers: int
    hidden: int
    attn_width: float

    @classmethod
    def of(cls, arch: Any) -> ModelShape:
        """From a ``models.architectures.ModelArch`` (or anything with the same attributes)."""
        hidden = int(arch.hidden_size)
        q_width = float(getattr(arch, "q_width", hidden))
        v_width = float(getattr(arch, "attn_out_width", q_width))
        return cls(
            n_params=float(arch.n_params),
            n_active_params=float(getattr(arch, "n_active_params", arch.n_params)),
            layers=int(arch.num_layers),
            hidden=hidden,
            attn_width=(q_width + v_width) / 2,
        )


class Throughput(BaseModel):
    """Predicted training speed of one configuration."""

    model_config = ConfigDict(frozen=True)

    tokens_per_sec_per_gpu: float
    mfu: float = Field(description="model FLOPs (6N or 4N + attention, no recompute) / dense peak")
    hfu: float = Field(description="hardware FLOPs (recomputation included) / dense peak")
    flops_per_token: float
    hardware_flops_per_token: float
    peak_tflops: float
    gpu: str
    gpus: int
    sharding: str
    communication_share: float = Field(description="share of step time lost to exposed communication")
    dequant_share: float = Field(description="share of step time spent dequantising the 4-bit base")
    optimizer_share: float = Field(default=0.0, description="share of step time in the optimizer step")
    overhead_share: float = Field(default=0.0, description="share of step time in fixed per-layer costs")
    eager_share: float = Field(default=0.0, description="share of step time streaming eager attention scores")
    grad_accum: int = 1


def time_breakdown(speed: Throughput) -> dict[str, float]:
    """Shares of the time per token: matmul and attention compute, the fixed per-layer cost,
    4-bit dequantisation, eager attention's score traffic, the optimizer step and exposed
    communication (they sum to 1)."""
    parts = {
        "overhead": speed.overhead_share,
        "dequant": speed.dequant_share,
        "eager_attention": speed.eager_share,
        "optimizer_step": speed.optimizer_share,
        "communication": speed.communication_share,
    }
    return {
        "compute": round(max(0.0, 1.0 - sum(parts.values())), 4),
        **{k: round(v, 4) for k, v in parts.items()},
    }


def compiled_kernels(compile: bool, framework: str = "hf") -> bool:
    """torch.compile, or a framework whose own kernels fuse the elementwise ops (Unsloth)."""
    from gpuprice.models.frameworks import DEFAULTS

    defaults = DEFAULTS.get(framework)
    return bool(compile) or bool(defaults and defaults.fused_kernels)


def _check_config(method: str, sharding: str, gpus: int, seq_len: int, micro_batch: int) -> None:
    if method not in METHODS:
        raise BadInput(f"unknown method {method!r}; valid: {', '.join(METHODS)}")
    if sharding not in _FULL_COMM_BYTES:
        raise BadInput(f"unknown sharding {sharding!r}; valid: {', '.join(SHARDINGS)}")
    for name, value in (("gpus", gpus), ("seq_len", seq_len), ("micro_batch", micro_batch)):
        if value < 1:
            raise BadInput(f"{name} must be at least 1 (got {value})")


def predict_throughput(
    arch: object,
    method: str,
    gpu_slug: str,
    gpus: int = 1,
    seq_len: int = 2048,
    micro_batch: int = 1,
    grad_checkpointing: bool = False,
    precision: str = "bf16-mixed",
    sharding: str = "none",
    *,
    compile: bool = False,
    framework: str = "hf",
    fabric_gbps_per_gpu: float | None = None,
    params: ThroughputParameters = CALIBRATED_PARAMETERS,
    keeps_scores: bool = False,
    grad_accum: int = 1,
    optimizer: str = "adamw",
    adamw_step: str = "foreach",
) -> Throughput:
    """Tokens/s per GPU, MFU and FLOPs per token of one training configuration.

    ``arch`` is a ``ModelArch`` (or a :class:`ModelShape`); ``gpus`` over 8 are whole nodes joined
    by ``fabric_gbps_per_gpu`` (default per GPU family, see DEFAULT_FABRIC_GBPS). ``grad_accum``
    micro-batches share one optimizer step (``optimizer`` with ``adamw_step`` "foreach"/"fused").
    """
    _check_config(method, sharding, gpus, seq_len, micro_batch)
    if grad_accum < 1:
        raise BadInput(f"grad_accum must be at least 1 (got {grad_accum})")
    shape = arch if isinstance(arch, ModelShape) else ModelShape.of(arch)
    profile = gpu_profile(gpu_slug)
    cases = cases_from_columns(
        shape=[shape],
        profile=[profile],
        method=np.array([method]),
        gpus=np.array([gpus], dtype=float),
        seq_len=np.array([seq_len], dtype=float),
        micro_batch=np.array([micro_batch], dtype=float),
        checkpointing=np.array([bool(grad_checkpointing)]),
        compiled=np.array([compiled_kernels(compile, framework)]),
        precision=np.array([precision]),
        sharding=np.array([sharding]),
        fabric=[fabric_gbps_per_gpu],
        grad_accum=np.array([grad_accum], dtype=float),
        optimizer_bytes=np.array([optimizer_step_bytes(optimizer, adamw_step, precision)]),
    )
    if keeps_scores:  # eager / explicit-score attention (memory_setup.keeps_scores)
        cases.score_heads = np.array([float(getattr(arch, "num_heads", 0))])
    result = evaluate(cases, params)
    return Throughput(
        tokens_per_sec_per_gpu=float(result.tokens_per_sec_per_gpu[0]),
        mfu=float(result.mfu[0]),
        hfu=float(result.hfu[0]),
        flops_per_token=float(result.flops_per_token[0]),
        hardware_flops_per_token=float(result.hardware_flops_per_token[0]),
        peak_tflops=profile.peak_tflops,
        gpu=gpu_slug,
        gpus=gpus,
        sharding=sharding,
        communication_share=float(result.communication_share[0]),
        dequant_share=float(result.dequant_share[0]),
        optimizer_share=float(result.optimizer_share[0]),
        overhead_share=float(result.overhead_share[0]),
        eager_share=float(result.eager_share[0]),
        grad_accum=grad_accum,
    )


def cases_from_columns(
    *,
    shape: Sequence[ModelShape],
    profile: Sequence[GpuProfile],
    method: np.ndarray,
    gpus: np.ndarray,
    seq_len: np.ndarray,
    micro_batch: np.ndarray,
    checkpointing: np.ndarray,
    compiled: np.ndarray,
    precision: np.ndarray,
    sharding: np.ndarray,
    fabric: Sequence[float | None],
    grad_accum: np.ndarray | None = None,
    optimizer_bytes: np.ndarray | None = None,
) -> Cases:
    """Row-wise construction (benchmarks, single predictions). The ranking uses predict_frame."""
    busbw = np.array(
        [collective_busbw_gbs(p, int(g), f) * 1e9 for p, g, f in zip(profile, gpus, fabric, strict=True)]
    )
    comm = np.array(
        [comm_bytes_per_param(m, s, pr) for m, s, pr in zip(method, sharding, precision, strict=True)]
    )
    return Cases(
        n_params=np.array([s.n_params for s in shape], dtype=float),
        n_active=np.array([s.n_active_params for s in shape], dtype=float),
        layers=np.array([s.layers for s in shape], dtype=float),
        hidden=np.array([s.hidden for s in shape], dtype=float),
        attn_width=np.array([s.attn_width for s in shape], dtype=float),
        seq_len=seq_len,
        micro_batch=micro_batch,
        full=method == "full",
        qlora=method == "qlora",
        checkpointing=checkpointing.astype(bool),
        compiled=compiled.astype(bool),
        precision_factor=np.array([precision_factor(p) for p in precision], dtype=float),
        peak_flops=np.array([p.peak_tflops * 1e12 for p in profile]),
        has_fp8=np.array([p.has_fp8 for p in profile]),
        memory_bw=np.array([p.memory_bandwidth_tbps * 1e12 for p in profile]),
        family=np.array([FAMILY_CODE[p.family] for p in profile], dtype=np.int64),
        gpus=gpus,
        busbw=busbw,
        comm_bytes_per_param=comm,
        grad_accum=grad_accum,
        optimizer_bytes=optimizer_bytes,
        step_comm_bytes_per_param=np.array(
            [
                step_comm_bytes_per_param(m, s, pr)
                for m, s, pr in zip(method, sharding, precision, strict=True)
            ]
        ),
        sharded_states=np.array([s in SHARDED_STATES for s in sharding], dtype=bool),
    )


# --------------------------------------------------------------------------- vectorised frame API
FRAME_INPUT_COLUMNS = (
    "gpu",
    "gpus",
    "method",
    "seq_len",
    "micro_batch",
    "grad_checkpointing",
    "precision",
    "sharding",
    "n_params",
    "n_active_params",
    "layers",
    "hidden",
    "attn_width",
)


FRAME_OUTPUT_COLUMNS = (
    "tokens_per_sec_per_gpu",
    "mfu",
    "hfu",
    "flops_per_token",
    "communication_share",
    "dequant_share",
)


def predict_frame(frame: pd.DataFrame, params: ThroughputParameters = CALIBRATED_PARAMETERS) -> pd.DataFrame:
    """Vectorised :func:`predict_throughput` over a frame with FRAME_INPUT_COLUMNS (and optionally
    ``compile``: torch.compile or fused framework kernels, default False).

    Optional columns: ``grad_accum`` (micro-batches per optimizer step, default 1),
    ``optimizer_bytes`` (HBM bytes per parameter of one optimizer step, default foreach AdamW on
    fp32 states: :func:`optimizer_step_bytes`), ``score_heads``.
    Returns FRAME_OUTPUT_COLUMNS (tokens_per_sec_per_gpu, mfu, hfu, flops_per_token,
    communication_share, dequant_share) aligned with ``frame``.
    """
    missing = [c for c in FRAME_INPUT_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"predict_frame: missing columns {missing}")
    columns = {name: frame[name].to_numpy() for name in FRAME_INPUT_COLUMNS}
    return pd.DataFrame(predict_columns(columns, params), index=frame.index)


def predict_columns(
    columns: Mapping[str, np.ndarray], params: ThroughputParameters = CALIBRATED_PARAMETERS
) -> dict[str, np.ndarray]:
    """:func:`predict_frame` on plain arrays (one per FRAME_INPUT_COLUMNS name, equal lengths).

    Link bandwidth is looked up once per distinct (GPU, count) and communication volume once per
    (method, sharding, precision), then broadcast: a million rows cost a few dozen numpy passes.
    """
    size = len(columns["gpu"])
    if size == 0:
        return {name: np.zeros(0) for name in FRAME_OUTPUT_COLUMNS}
    gpu_codes, gpu_uniques = pd.factorize(np.asarray(columns["gpu"], dtype=object), sort=False)
    profiles = [gpu_profile(str(slug)) for slug in gpu_uniques]

    def factorize(name: str) -> tuple[np.ndarray, list[str]]:
        codes, uniques = pd.factorize(np.asarray(columns[name], dtype=object), sort=False)
        return codes, [str(u) for u in uniques]

    method_codes, methods = factorize("method")
    precision_codes, precisions = factorize("precision")
    sharding_codes, shardings = factorize("sharding")
    for method, sharding in ((m, s) for m in methods for s in shardings):
        _check_config(method, sharding, 1, 1, 1)
    gpu_counts, count_codes = np.unique(np.asarray(columns["gpus"], dtype=np.int64), return_inverse=True)
    counts = gpu_counts.tolist()

    # Bandwidth depends on (GPU, count), communication volume on (method, sharding, precision):
    # compute each once per distinct pair/triple and broadcast through integer codes.
    link_keys, link_codes = np.unique(
        gpu_codes.astype(np.int64) * len(counts) + count_codes, return_inverse=True
    )
    busbw_u = np.array(
        [
            collective_busbw_gbs(profiles[k // len(counts)], counts[k % len(counts)]) * 1e9
            for k in link_keys.tolist()
        ]
    )
    recipe = (method_codes.astype(np.int64) * len(shardings) + sharding_codes) * len(
        precisions
    ) + precision_codes
    recipe_keys, recipe_codes = np.unique(recipe, return_inverse=True)
    recipes = [
        (
            methods[k // (len(shardings) * len(precisions))],
            shardings[(k // len(precisions)) % len(shardings)],
            precisions[k % len(precisions)],
        )
        for k in recipe_keys.tolist()
    ]
    comm_u = np.array([comm_bytes_per_param(*r) for r in recipes])
    step_comm_u = np.array([step_comm_bytes_per_param(*r) for r in recipes])
    sharded_u = np.array([s in SHARDED_STATES for s in shardings], dtype=bool)
    prec_u = np.array([precision_factor(p) for p in precisions])

    def per_gpu(values: list, dtype: type = float) -> np.ndarray:
        return np.asarray(values, dtype=dtype)[gpu_codes]

    def per_method(name: str) -> np.ndarray:
        return np.asarray([m == name for m in methods])[method_codes]

    def floats(name: str) -> np.ndarray:
        return np.broadcast_to(np.asarray(columns[name], dtype=float), (size,))

    cases = Cases(
        n_params=floats("n_params"),
        n_active=floats("n_active_params"),
        layers=floats("layers"),
        hidden=floats("hidden"),
        attn_width=floats("attn_width"),
        seq_len=floats("seq_len"),
        micro_batch=floats("micro_batch"),
        full=per_method("full"),
        qlora=per_method("qlora"),
        checkpointing=np.broadcast_to(np.asarray(columns["grad_checkpointing"], dtype=bool), (size,)),
        compiled=np.broadcast_to(np.asarray(columns.get("compile", False), dtype=bool), (size,)),
        precision_factor=prec_u[precision_codes],
        peak_flops=per_gpu([p.peak_tflops * 1e12 for p in profiles]),
        has_fp8=per_gpu([p.has_fp8 for p in profiles], bool),
        memory_bw=per_gpu([p.memory_bandwidth_tbps * 1e12 for p in profiles]),
        family=per_gpu([FAMILY_CODE[p.family] for p in profiles], np.int64),
        gpus=gpu_counts[count_codes].astype(float),
        busbw=busbw_u[link_codes],
        comm_bytes_per_param=comm_u[recipe_codes],
        score_heads=floats("score_heads") if "score_heads" in columns else None,
        grad_accum=floats("grad_accum") if "grad_accum" in columns else None,
        optimizer_bytes=floats("optimizer_bytes") if "optimizer_bytes" in columns else None,
        step_comm_bytes_per_param=step_comm_u[recipe_codes],
        sharded_states=sharded_u[sharding_codes],
    )
    result = evaluate(cases, params)
    return {name: getattr(result, name) for name in FRAME_OUTPUT_COLUMNS}
