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
  6 L s (q_width + v_width) = 12 L h s for a standard block, L counting the softmax-attention
  blocks only (a hybrid's Mamba / DeltaNet blocks have no s x s term; block_parts.attention_share).
- activation checkpointing recomputes one forward: + 2 N + 4 L h s hardware FLOPs.
- ``mfu`` = model FLOPs x tokens/s / peak, i.e. on the 6N (4N for adapters) basis *including* the
  attention term and *excluding* recomputation; ``hfu`` counts the recomputation too.

The efficiency is a handful of physically meaningful numbers (:class:`ThroughputParameters`),
calibrated once on ``throughput_public.csv`` (see ``models/mfu_calibration.md``), never per row.
GPU facts are in :mod:`gpuprice.models.gpu_hardware`, the constants in
:mod:`gpuprice.models.throughput_parameters`, benchmark parsing and the fit in
:mod:`gpuprice.models.calibration.throughput_rows`. This module is the public face: one
configuration's prediction (:func:`predict_throughput`) and its result; the time-per-token terms
are in :mod:`gpuprice.models.throughput_core` (:func:`evaluate`, shared with the ranking's
vectorised sweep in :mod:`gpuprice.models.throughput_frame`), the bytes each recipe moves per
parameter in :mod:`gpuprice.models.throughput_recipe`. Their names are re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpuprice.errors import BadInput
from gpuprice.models.architectures import ModelArch
from gpuprice.models.block_parts import attention_per_decoder_layer, decoder_layers
from gpuprice.models.frameworks import qlora_fp32_stream, runs_every_expert
from gpuprice.models.gpu_hardware import (  # re-exported: callers import the hardware facts from here too
    ALL_FAMILIES,
    FAMILY_CODE,
    PCIE_BUSBW_GBS,
    GpuProfile,
    collective_busbw_gbs,
    fp32_share,
    gpu_profile,
    intra_node_busbw_gbs,
)
from gpuprice.models.selective_checkpointing import recomputed_matmul_flops
from gpuprice.models.throughput_adapters import adapter_bytes_per_token, fp32_adapters
from gpuprice.models.throughput_attention import attention_inputs
from gpuprice.models.throughput_core import CaseResult, Cases, evaluate
from gpuprice.models.throughput_fp32_stream import fp32_stream_bytes_per_token
from gpuprice.models.throughput_frame import (
    FRAME_INPUT_COLUMNS,
    FRAME_OUTPUT_COLUMNS,
    predict_columns,
    predict_frame,
)
from gpuprice.models.throughput_parameters import (
    CALIBRATED_PARAMETERS,
    PRIOR_PARAMETERS,
    ThroughputParameters,
)
from gpuprice.models.throughput_recipe import (
    SHARDED_STATES,
    check_config,
    comm_bytes_per_param,
    optimizer_step_bytes,
    precision_factor,
    step_comm_bytes_per_param,
)

__all__ = [
    "ALL_FAMILIES",
    "CALIBRATED_PARAMETERS",
    "FRAME_INPUT_COLUMNS",
    "FRAME_OUTPUT_COLUMNS",
    "PCIE_BUSBW_GBS",
    "PRIOR_PARAMETERS",
    "CaseResult",
    "Cases",
    "GpuProfile",
    "ModelShape",
    "Throughput",
    "ThroughputParameters",
    "cases_from_columns",
    "collective_busbw_gbs",
    "comm_bytes_per_param",
    "compiled_kernels",
    "evaluate",
    "gpu_profile",
    "intra_node_busbw_gbs",
    "optimizer_step_bytes",
    "precision_factor",
    "predict_columns",
    "predict_frame",
    "predict_throughput",
    "step_comm_bytes_per_param",
    "time_breakdown",
]


@dataclass(frozen=True)
class ModelShape:
    """The parts of an architecture the throughput model uses."""

    n_params: float
    n_active_params: float
    layers: int
    hidden: int
    attn_width: float
    # forward FLOPs per token that op-level selective checkpointing recomputes
    # (selective_checkpointing.recomputed_matmul_flops); None for a shape known only by its size
    recomputed_matmul_flops_per_token: float | None = None

    @classmethod
    def of(cls, arch: Any) -> ModelShape:
        """From a ``models.architectures.ModelArch`` (or anything with the same attributes)."""
        hidden = int(arch.hidden_size)
        q_width = float(getattr(arch, "q_width", hidden))
        v_width = float(getattr(arch, "attn_out_width", q_width))
        # the s x s work runs in the softmax-attention blocks only (a hybrid's Mamba / DeltaNet
        # blocks have none): the per-layer width is their mean over the decoder layers
        share = attention_per_decoder_layer(arch) if isinstance(arch, ModelArch) else 1.0
        return cls(
            n_params=float(arch.n_params),
            n_active_params=float(getattr(arch, "n_active_params", arch.n_params)),
            layers=decoder_layers(arch) if isinstance(arch, ModelArch) else int(arch.num_layers),
            hidden=hidden,
            attn_width=(q_width + v_width) / 2 * share,
            recomputed_matmul_flops_per_token=recomputed_matmul_flops(arch),
        )

    def selective_recompute_flops(self) -> float:
        """Forward FLOPs per token op-level selective checkpointing recomputes; without an
        architecture, half of the blocks' matmuls (all of them but the embeddings' is N)."""
        if self.recomputed_matmul_flops_per_token is not None:
            return self.recomputed_matmul_flops_per_token
        return self.n_active_params


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
    eager_share: float = Field(
        default=0.0,
        description="share of step time streaming eager attention scores or an SDPA mask through HBM",
    )
    adapter_share: float = Field(
        default=0.0, description="share of step time in fp32 LoRA adapters' casts and sums (PEFT, bf16-true)"
    )
    fp32_stream_share: float = Field(
        default=0.0,
        description="share of step time in hf QLoRA's fp32 residual stream: casts around the 4-bit linears, fp32 elementwise ops",
    )
    grad_accum: int = 1


def time_breakdown(speed: Throughput) -> dict[str, float]:
    """Shares of the time per token: matmul and attention compute, the fixed per-layer cost,
    4-bit dequantisation, eager attention's score traffic (and a masked SDPA's mask reads), the
    optimizer step and exposed
    communication (they sum to 1)."""
    parts = {
        "overhead": speed.overhead_share,
        "dequant": speed.dequant_share,
        "eager_attention": speed.eager_share,
        "adapters": speed.adapter_share,
        "fp32_stream": speed.fp32_stream_share,
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
    attention: str | None = None,
    lora_targets: str | None = None,
    selective_checkpointing: bool = False,
) -> Throughput:
    """Tokens/s per GPU, MFU and FLOPs per token of one training configuration.

    ``arch`` is a ``ModelArch`` (or a :class:`ModelShape`); ``gpus`` over 8 are whole nodes joined
    by ``fabric_gbps_per_gpu`` (default per GPU family, see DEFAULT_FABRIC_GBPS). ``grad_accum``
    micro-batches share one optimizer step (``optimizer`` with ``adamw_step`` "foreach"/"fused").
    ``attention`` (flash, sdpa, eager; None: the fused causal kernel) with ``framework`` and
    ``micro_batch`` decides whether SDPA gets a padding mask and whether it runs in fp32
    (:mod:`gpuprice.models.throughput_attention`). ``lora_targets`` (all, qv; None: not counted)
    adds PEFT's fp32-adapter traffic where it applies (:mod:`gpuprice.models.throughput_adapters`)
    and hf QLoRA's fp32 residual stream where ``frameworks.qlora_fp32_stream`` holds
    (:mod:`gpuprice.models.throughput_fp32_stream`); both need a real architecture.
    ``selective_checkpointing`` (without ``grad_checkpointing``): op-level selective recompute,
    every second matmul of each block (:mod:`gpuprice.models.selective_checkpointing`).
    """
    check_config(method, sharding, gpus, seq_len, micro_batch)
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
        optimizer_bytes=np.array(
            [optimizer_step_bytes(optimizer, adamw_step, precision, framework, sharding)]
        ),
    )
    if selective_checkpointing and not grad_checkpointing:
        cases.selective_flops = np.array([shape.selective_recompute_flops()])
    if runs_every_expert(framework, str(getattr(arch, "model_type", ""))):
        cases.unrouted_params = np.array([shape.n_params - shape.n_active_params])
    heads = float(getattr(arch, "num_heads", 0) or round(shape.hidden / 128))
    if isinstance(arch, ModelArch):  # scores and masks exist in attention blocks only (mean per block)
        heads *= attention_per_decoder_layer(arch)
    if keeps_scores:  # eager / explicit-score attention (memory_setup.keeps_scores)
        cases.score_heads = np.array([heads])
    if attention is not None:
        masked, element, fp32_attn = attention_inputs(
            framework,
            attention,
            micro_batch,
            precision,
            heads,
            keeps_scores,
            str(getattr(arch, "model_type", "")),
        )
        cases.masked_heads, cases.mask_bytes = np.array([masked]), np.array([element])
        cases.fp32_attention = np.array([fp32_attn])
    if (
        lora_targets is not None
        and fp32_adapters(framework, method, precision)
        and hasattr(arch, "gated_mlp")
    ):
        cases.adapter_bytes = np.array([adapter_bytes_per_token(arch, lora_targets, grad_checkpointing)])
    if (
        lora_targets is not None
        and qlora_fp32_stream(framework, method, precision, sharding)
        and hasattr(arch, "gated_mlp")
    ):
        stream = fp32_stream_bytes_per_token(arch, lora_targets, grad_checkpointing)
        cases.stream_bytes = np.array([stream])
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
        adapter_share=float(result.adapter_share[0]),
        fp32_stream_share=float(result.stream_share[0]),
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
        precision_factor=np.array(
            [precision_factor(p, m) for p, m in zip(precision, method, strict=True)], dtype=float
        ),
        fp32_share=np.array([fp32_share(p) for p in profile]),
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
