"""The throughput model's core: time per token of a batch of configurations, as numpy arrays.

:class:`Cases` holds one element per configuration; :func:`evaluate` turns them into tokens/s per
GPU, MFU/HFU and the shares of the step time (the terms are described in
:mod:`gpuprice.models.throughput`). The scalar prediction and the ranking's vectorised sweep both
build :class:`Cases` and call this one :func:`evaluate`, so they cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuprice.models.gpu_hardware import ALL_FAMILIES, GPUS_PER_NODE
from gpuprice.models.throughput_attention import CAUSAL_SKIP, FP32_ATTENTION_RATE, MEM_EFFICIENT_SLOWDOWN
from gpuprice.models.throughput_parameters import CALIBRATED_PARAMETERS, ThroughputParameters
from gpuprice.models.throughput_recipe import optimizer_step_bytes

# HBM bytes per attention score under eager attention (transformers' eager_attention_forward),
# forward and forward + backward; see evaluate().
EAGER_SCORE_FORWARD_BYTES = 26.0
EAGER_SCORE_TRAFFIC_BYTES = 60.0


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
    # 1 = BF16/FP16 tensor math, 0 marks FP32 on the CUDA cores (the GPU's fp32_share), -1 marks FP8
    # (gain applied if supported)
    precision_factor: np.ndarray
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
    # FP32 CUDA-core peak / dense BF16 peak per GPU (gpu_hardware.fp32_share), for precision
    # factor 0 (None: 0.5, the TF32 rate, for callers that do not know the GPU).
    fp32_share: np.ndarray | None = None
    # Attention heads that get an explicit padding mask under SDPA (memory-efficient kernel, full
    # s x s, mask read per head: throughput_attention), 0 / None: the fused causal kernel; and the
    # mask's bytes per element.
    masked_heads: np.ndarray | None = None
    mask_bytes: np.ndarray | None = None
    # bool: q, k, v reach SDPA in fp32 (memory-efficient kernel at the 3 x TF32 rate), None: no
    fp32_attention: np.ndarray | None = None
    # HBM bytes per token of PEFT's fp32 adapters on a bf16 base without autocast
    # (throughput_adapters), None / 0: none
    adapter_bytes: np.ndarray | None = None
    # HBM bytes per token of hf QLoRA's fp32 residual stream (throughput_fp32_stream), None / 0: none
    stream_bytes: np.ndarray | None = None
    # Selective activation checkpointing (rows without full recompute): forward FLOPs per token of
    # the matmuls it recomputes, and the share of attention it recomputes (op-level: 0, SDPA's
    # output is saved; every N-th layer: 1/N). None: nothing recomputed.
    selective_flops: np.ndarray | None = None
    selective_attention: np.ndarray | None = None
    # Parameters of routed experts a step computes for tokens not routed to them (transformers'
    # Llama 4: frameworks.runs_every_expert), None / 0: only the top-k run. Hardware FLOPs only:
    # the model FLOPs (MFU) stay on the active parameters.
    unrouted_params: np.ndarray | None = None

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
    adapter_share: np.ndarray  # share of step time in fp32 adapters' casts and sums (PEFT, bf16-true)
    stream_share: np.ndarray  # share of step time in hf QLoRA's fp32 stream's casts and fp32 elementwise ops


def evaluate(cases: Cases, params: ThroughputParameters = CALIBRATED_PARAMETERS) -> CaseResult:
    """Vectorised throughput for every configuration in ``cases``."""
    family_eff = np.array([params.efficiency_of(f) for f in ALL_FAMILIES])[cases.family]

    n_active, layers, seq = cases.n_active, cases.layers, cases.seq_len
    attn = 12.0 * layers * cases.attn_width * seq  # per token, forward + backward (6 L s (q + v))
    dense = np.where(cases.full, 6.0, 4.0) * n_active
    selective_dense = cases.selective_flops if cases.selective_flops is not None else 0.0
    selective_attn = cases.selective_attention if cases.selective_attention is not None else 0.0
    recompute_dense = np.where(cases.checkpointing, 2.0 * n_active, selective_dense)
    recompute_attn = np.where(cases.checkpointing, 1.0, selective_attn) * attn / 3.0
    unrouted = cases.unrouted_params if cases.unrouted_params is not None else 0.0
    unrouted_work = (np.where(cases.full, 6.0, 4.0) + np.where(cases.checkpointing, 2.0, 0.0)) * unrouted

    fp8 = cases.precision_factor < 0
    fp32_share = cases.fp32_share if cases.fp32_share is not None else 0.5
    fp32 = cases.precision_factor == 0
    precision = np.where(
        fp8,
        np.where(cases.has_fp8, params.fp8_speedup, 1.0),
        np.where(fp32, fp32_share, cases.precision_factor),
    )
    efficiency16 = (
        family_eff
        * cases.hidden
        / (cases.hidden + params.half_width)
        * np.where(cases.full, 1.0, params.lora_efficiency)
        * np.where(cases.compiled, params.compile_speedup, 1.0)
    )
    rate = cases.peak_flops * efficiency16 * precision
    # Attention kernels (throughput_attention): the calibrated fused causal kernel; fp32 inputs
    # run the memory-efficient kernel at the 3 x TF32 rate; an explicit padding mask makes it
    # compute every tile (no causal half skipped) at the memory-efficient kernel's speed.
    no_heads = np.zeros_like(layers)
    masked_heads = cases.masked_heads if cases.masked_heads is not None else no_heads
    masked = masked_heads > 0
    fp32_attn = cases.fp32_attention if cases.fp32_attention is not None else np.zeros_like(masked)
    attention_rate = (
        np.where(fp32_attn, cases.peak_flops * efficiency16 * FP32_ATTENTION_RATE, rate)
        * params.attention_efficiency
        * np.where(_NEW_MMA[cases.family], params.hopper_attention_factor, 1.0)
        / np.where(masked | fp32_attn, MEM_EFFICIENT_SLOWDOWN, 1.0)
        / np.where(masked, CAUSAL_SKIP, 1.0)
    )
    compute = (dense + recompute_dense + unrouted_work) / rate + (attn + recompute_attn) / attention_rate

    tokens_mb = cases.micro_batch * seq
    overhead = params.layer_overhead_ms * 1e-3 * layers / tokens_mb
    # Eager attention streams every score through HBM: forward writes Q K^T, scales, masks, runs an
    # fp32 softmax and casts (26 B per score: 2 written, 2+2, 2+2, 2+4, 4+2 read+written, 2 read
    # by P V); backward reads and writes the 16-bit and fp32 gradients (34 B); recomputation
    # repeats the forward. Memory-bound: bytes / HBM bandwidth, per token L x heads x s x bytes.
    heads = cases.score_heads if cases.score_heads is not None else np.zeros_like(layers)
    score_bytes = EAGER_SCORE_TRAFFIC_BYTES + np.where(cases.checkpointing, EAGER_SCORE_FORWARD_BYTES, 0.0)
    eager = layers * heads * seq * score_bytes / cases.memory_bw
    # The explicit mask is read for every head on every pass (forward, backward, recomputed
    # forward): memory-bound, L x masked heads x s x bytes per token.
    element = cases.mask_bytes if cases.mask_bytes is not None else 2.0
    eager = eager + layers * masked_heads * seq * element * (2.0 + cases.checkpointing) / cases.memory_bw
    adapters = (cases.adapter_bytes if cases.adapter_bytes is not None else 0.0) / cases.memory_bw
    stream = (cases.stream_bytes if cases.stream_bytes is not None else 0.0) / cases.memory_bw
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
    step_bytes = (
        cases.optimizer_bytes
        if cases.optimizer_bytes is not None
        else np.full_like(layers, optimizer_step_bytes())  # foreach AdamW, fp32 states, hf's clip
    )
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
    seconds = (compute + overhead + dequant + eager + adapters + stream + optimizer + exposed) * stretch

    tokens = 1.0 / seconds
    model_flops = dense + attn
    hardware_flops = model_flops + recompute_dense + recompute_attn + unrouted_work
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
        adapter_share=adapters * stretch / seconds,
        stream_share=stream * stretch / seconds,
    )


# FlashAttention-3 paper (Shah et al. 2024): FlashAttention-2 reaches ~35 % of H100 peak against
# 50-73 % of A100 peak, because it does not use Hopper's asynchronous MMA/TMA units.
_NEW_MMA = np.array([family in ("hopper", "blackwell") for family in ALL_FAMILIES])
