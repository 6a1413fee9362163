"""Training throughput: tokens per second per GPU for a model, method, GPU and parallel layout.

    tokens/s/GPU = 1 / (time per token), where one token costs
      compute   hardware FLOPs / (peak dense BF16 x efficiency)
    + dequant   QLoRA: the 4-bit base is expanded to 16-bit on every pass (memory-bound)
    + overhead  a fixed cost per layer and micro-batch (kernel launches, sync points)
    + exposed   gradient/parameter communication that compute could not hide
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
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from gpuprice.errors import BadInput
from gpuprice.models.choices import GPUS_PER_NODE, METHODS, SHARDINGS

GpuFamily = Literal[
    "ampere_datacenter",  # A100 (HBM)
    "hopper",  # H100, H200, GH200
    "blackwell",  # B200, B300, GB200
    "ampere_workstation",  # A10, A40, RTX A5000/A6000
    "ada_workstation",  # L4, L40, L40S, RTX 6000 Ada (power-capped AD10x)
    "geforce",  # RTX 3090/4090/5090, RTX PRO 6000 (GB202 at full power)
    "volta",
    "turing",
    "cdna",  # AMD Instinct
]
ALL_FAMILIES: tuple[GpuFamily, ...] = (
    "ampere_datacenter",
    "hopper",
    "blackwell",
    "ampere_workstation",
    "ada_workstation",
    "geforce",
    "volta",
    "turing",
    "cdna",
)
FAMILY_CODE = {family: code for code, family in enumerate(ALL_FAMILIES)}
# Families calibrated on throughput_public.csv: ampere_datacenter, hopper, ampere_workstation,
# ada_workstation, geforce. Families without public training measurements borrow a sibling's efficiency
# (assumptions, documented in mfu_calibration.md): Blackwell runs the Hopper software stack; V100
# lacks FlashAttention-2 and BF16; T4 is a 70 W inference card; ROCm training reaches a lower
# share of the (much higher) MI300X datasheet peak than CUDA on H100.
ASSUMED_FAMILY_RATIOS: dict[GpuFamily, tuple[GpuFamily, float]] = {
    "blackwell": ("hopper", 1.0),
    "volta": ("ampere_datacenter", 0.8),
    "turing": ("ampere_workstation", 0.8),
    "cdna": ("hopper", 0.7),
}

# Effective NCCL bus bandwidth (GB/s) between the GPUs of one node without NVLink. Order of
# magnitude from PCIe x16 line rate (Gen4 32 GB/s, Gen5 64 GB/s per direction) at ~60 %
# through switches; GeForce cards have no peer-to-peer, so traffic bounces through host memory.
PCIE_BUSBW_GBS = {"gen3": 10.0, "gen4": 20.0, "gen5": 40.0, "no_p2p": 12.0}
# NCCL all-gather/reduce-scatter bus bandwidth reaches ~80 % of one direction of NVLink, i.e.
# 0.4 x the bidirectional figure the catalog stores (H100: 900 GB/s -> ~360 GB/s measured).
NVLINK_BUSBW_SHARE = 0.4
# Multi-node fabric per GPU (Gb/s) assumed when an offer does not say: the tracked providers sell
# HGX Hopper/Blackwell clusters with 8 x 400 Gb/s InfiniBand (3.2 Tb/s per node); A100 clusters
# with 8 x 200 Gb/s HDR; anything else over 100 Gb/s Ethernet.
DEFAULT_FABRIC_GBPS: dict[GpuFamily, float] = {
    "hopper": 400.0,
    "blackwell": 400.0,
    "cdna": 400.0,
    "ampere_datacenter": 200.0,
}
FALLBACK_FABRIC_GBPS = 100.0
FABRIC_EFFICIENCY = 0.9

# Bytes moved per parameter and micro-batch per GPU (before the (n-1)/n ring factor), BF16 comms.
#   full + zero3/fsdp: all-gather for forward and backward + reduce-scatter of gradients = 2+2+2
#   full + zero2: reduce-scatter gradients + all-gather updated parameters = 2+2
#   full + none (DDP): ring all-reduce moves the gradients twice = 2+2
#   adapters + zero3/fsdp: the frozen base is gathered for forward and backward (2 x weight bytes)
#   adapters otherwise: only the adapters' gradients (negligible)
_FULL_COMM_BYTES = {"zero3": 6.0, "fsdp": 6.0, "zero2": 4.0, "none": 4.0, "model_parallel": 0.0}
NF4_BYTES_PER_PARAM = 0.5625  # 4 bits + one fp32 absmax per 64 weights (QLoRA paper)


class ThroughputParameters(BaseModel):
    """The calibrated constants of the throughput model (see mfu_calibration.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family_efficiency: dict[str, float] = Field(
        description="share of dense peak that large BF16 matmuls reach in training, per GPU family"
    )
    half_width: float = Field(
        gt=0, description="hidden size h0 in h/(h+h0): narrow models under-use tensor cores"
    )
    attention_efficiency: float = Field(gt=0, description="attention FLOPs' efficiency relative to matmuls")
    hopper_attention_factor: float = Field(
        gt=0,
        description="extra attention factor on Hopper/Blackwell (FlashAttention-2 does not use their new MMA units)",
    )
    layer_overhead_ms: float = Field(ge=0, description="fixed time per layer and micro-batch")
    dequant_bytes_per_param: float = Field(ge=0, description="memory traffic per 4-bit weight and pass")
    fp8_speedup: float = Field(gt=0, description="FP8 (Transformer Engine) gain over BF16 on FP8 parts")
    lora_efficiency: float = Field(
        gt=0, description="LoRA/QLoRA kernels' efficiency relative to full training"
    )
    node_scaling_loss: float = Field(ge=0, description="time added per doubling of the node count")
    comm_overlap: float = Field(ge=0, le=1, description="share of compute time that can hide communication")

    def efficiency_of(self, family: str) -> float:
        if family in self.family_efficiency:
            return self.family_efficiency[family]
        sibling, ratio = ASSUMED_FAMILY_RATIOS[family]  # type: ignore[index]
        return self.family_efficiency[sibling] * ratio

    def complete(self) -> ThroughputParameters:
        """The same parameters with every family's efficiency filled in (assumed ones derived)."""
        table = dict(self.family_efficiency)
        for family in ASSUMED_FAMILY_RATIOS:
            table.setdefault(family, self.efficiency_of(family))
        return self.model_copy(update={"family_efficiency": table})


# Starting point of the calibration: cost-model.md's anchors (H100 ~0.40 MFU, A100 ~0.50 for
# large pre-training with activation checkpointing, i.e. ~0.55/0.70 hardware utilisation), 0.8
# for LoRA kernels, 1.5x for FP8; the rest are order-of-magnitude guesses.
PRIOR_PARAMETERS = ThroughputParameters(
    family_efficiency={
        "ampere_datacenter": 0.70,
        "hopper": 0.55,
        "ampere_workstation": 0.55,
        "ada_workstation": 0.45,
        "geforce": 0.60,
    },
    half_width=300.0,
    attention_efficiency=0.8,
    hopper_attention_factor=0.6,
    layer_overhead_ms=1.0,
    dequant_bytes_per_param=8.0,
    fp8_speedup=1.5,
    lora_efficiency=0.8,
    node_scaling_loss=0.02,
    comm_overlap=0.2,
)

# Result of `fit_parameters(load_benchmark_rows(throughput_public.csv))`, rounded; see
# mfu_calibration.md for the fit, its accuracy and a held-out check. Re-run when real runs exist.
CALIBRATED_PARAMETERS = ThroughputParameters(
    family_efficiency={
        "ampere_datacenter": 0.808,
        "hopper": 0.694,
        "ampere_workstation": 0.781,
        "ada_workstation": 0.336,
        "geforce": 0.835,
    },
    half_width=611.0,
    attention_efficiency=1.11,
    hopper_attention_factor=0.478,
    layer_overhead_ms=1.45,
    dequant_bytes_per_param=18.0,
    fp8_speedup=1.39,
    lora_efficiency=0.876,
    node_scaling_loss=0.0142,
    comm_overlap=0.0276,
)


# --------------------------------------------------------------------------- GPU profiles
@dataclass(frozen=True)
class GpuProfile:
    """What the throughput model needs to know about one GPU."""

    slug: str
    family: GpuFamily
    peak_tflops: float  # dense BF16 (FP16 for parts without BF16)
    has_fp8: bool
    memory_bandwidth_tbps: float
    nvlink_gbps: float | None  # bidirectional GB/s per GPU, None = PCIe only
    form_factor: str
    pcie: str  # key of PCIE_BUSBW_GBS


def _family_of(architecture: str, form_factor: str, memory_bandwidth_tbps: float) -> GpuFamily:
    arch = architecture.lower()
    if form_factor == "consumer":
        return "geforce"
    if arch == "ampere":
        return "ampere_datacenter" if memory_bandwidth_tbps >= 1.2 else "ampere_workstation"
    if arch == "ada":
        return "ada_workstation"
    if arch == "hopper":
        return "hopper"
    if arch == "blackwell":
        return "blackwell" if form_factor in ("sxm", "superchip") else "geforce"
    if arch.startswith("cdna"):
        return "cdna"
    if arch in ("volta", "turing"):
        return arch  # type: ignore[return-value]
    raise ValueError(f"no throughput family for architecture {architecture!r}")


def _pcie_of(architecture: str, form_factor: str) -> str:
    if form_factor == "consumer":
        return "no_p2p"
    if architecture.lower() in ("hopper", "blackwell") or architecture.lower().startswith("cdna"):
        return "gen5"
    if architecture.lower() in ("volta", "turing"):
        return "gen3"
    return "gen4"


# Parts that appear in public benchmarks but not in the GPU catalog (nobody rents them from the
# tracked providers). Values: datasheets as compiled in gpu_peak_flops.csv (H20, A10G, MI250X per
# OAM) and the H100/A100 export variants' (H800/A800) reduced NVLink (400 GB/s).
_BENCHMARK_ONLY_GPUS: dict[str, GpuProfile] = {
    "a10g": GpuProfile("a10g", "ampere_workstation", 70.0, False, 0.6, None, "pcie", "gen4"),
    "h20": GpuProfile("h20", "hopper", 148.0, True, 4.0, 900.0, "sxm", "gen5"),
    "h800": GpuProfile("h800", "hopper", 989.0, True, 3.35, 400.0, "sxm", "gen5"),
    "a800": GpuProfile("a800", "ampere_datacenter", 312.0, False, 2.039, 400.0, "sxm", "gen4"),
    "mi250x": GpuProfile("mi250x", "cdna", 383.0, False, 3.2, 800.0, "sxm", "gen4"),
}
_BENCHMARK_ONLY_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\ba10g\b", "a10g"),
    (r"\bh20\b", "h20"),
    (r"\bh800\b", "h800"),
    (r"\ba800\b", "a800"),
    (r"\bmi250x?\b", "mi250x"),
)


def gpu_profile(slug: str) -> GpuProfile:
    """The throughput-relevant facts of a catalog GPU (or a benchmark-only part)."""
    if slug in _BENCHMARK_ONLY_GPUS:
        return _BENCHMARK_ONLY_GPUS[slug]
    return _catalog_profiles()[slug] if slug in _catalog_profiles() else _raise_unknown_gpu(slug)


def _raise_unknown_gpu(slug: str) -> GpuProfile:
    from gpuprice.models.catalog import get_gpu

    get_gpu(slug)  # raises BadInput naming close matches
    raise AssertionError("unreachable")


_PROFILE_CACHE: dict[str, GpuProfile] = {}


def _catalog_profiles() -> dict[str, GpuProfile]:
    if not _PROFILE_CACHE:
        from gpuprice.models.catalog import load_gpu_catalog

        for row in load_gpu_catalog().itertuples(index=False):
            nvlink = None if pd.isna(row.nvlink_gbps) else float(row.nvlink_gbps)
            _PROFILE_CACHE[row.slug] = GpuProfile(
                slug=row.slug,
                family=_family_of(row.architecture, row.form_factor, float(row.memory_bandwidth_tbps)),
                peak_tflops=float(row.dense_bf16_tflops),
                has_fp8=not pd.isna(row.dense_fp8_tflops),
                memory_bandwidth_tbps=float(row.memory_bandwidth_tbps),
                nvlink_gbps=nvlink,
                form_factor=row.form_factor,
                pcie=_pcie_of(row.architecture, row.form_factor),
            )
    return _PROFILE_CACHE


def intra_node_busbw_gbs(profile: GpuProfile, gpus_per_node: int) -> float:
    """Effective collective bandwidth (GB/s) between the GPUs of one node."""
    if profile.nvlink_gbps and profile.form_factor in ("sxm", "superchip"):
        return NVLINK_BUSBW_SHARE * profile.nvlink_gbps
    if profile.nvlink_gbps and profile.form_factor == "nvl" and gpus_per_node <= 2:
        return NVLINK_BUSBW_SHARE * profile.nvlink_gbps  # NVL cards are bridged in pairs
    return PCIE_BUSBW_GBS[profile.pcie]


def collective_busbw_gbs(profile: GpuProfile, gpus: int, fabric_gbps_per_gpu: float | None = None) -> float:
    """Bandwidth of the job's collectives: the node's links, or the fabric when it spans nodes.

    A ring across nodes carries each node's share over all its NICs at once, so the per-rank
    bandwidth is the node's aggregate fabric bandwidth (8 x 400 Gb/s ~ NVLink: flat scaling).
    """
    per_node = min(gpus, GPUS_PER_NODE)
    intra = intra_node_busbw_gbs(profile, per_node)
    if gpus <= GPUS_PER_NODE:
        return intra
    fabric = fabric_gbps_per_gpu or DEFAULT_FABRIC_GBPS.get(profile.family, FALLBACK_FABRIC_GBPS)
    return min(intra, per_node * fabric / 8 * FABRIC_EFFICIENCY)


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
    precision_factor: np.ndarray  # 1 = BF16/FP16, 0.5 = FP32 (TF32), -1 marks FP8 (gain applied if supported)
    peak_flops: np.ndarray  # FLOP/s
    has_fp8: np.ndarray  # bool
    memory_bw: np.ndarray  # bytes/s
    family: np.ndarray  # int codes into ALL_FAMILIES
    gpus: np.ndarray
    busbw: np.ndarray  # bytes/s for the job's collectives
    comm_bytes_per_param: np.ndarray  # per micro-batch per GPU before the ring factor

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
    passes = 2.0 + cases.checkpointing
    dequant = np.where(
        cases.qlora,
        passes * params.dequant_bytes_per_param * cases.n_params / (cases.memory_bw * tokens_mb),
        0.0,
    )
    ring = np.where(cases.gpus > 1, (cases.gpus - 1) / np.maximum(cases.gpus, 1), 0.0)
    comm = cases.comm_bytes_per_param * cases.n_params * ring / (cases.busbw * tokens_mb)
    exposed = np.maximum(0.0, comm - params.comm_overlap * (compute + dequant))

    nodes = np.ceil(cases.gpus / GPUS_PER_NODE)
    stretch = 1.0 + params.node_scaling_loss * np.log2(np.maximum(nodes, 1.0))
    seconds = (compute + overhead + dequant + exposed) * stretch

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


@dataclass(frozen=True)
class ModelShape:
    """The parts of an architecture the throughput model uses."""

    n_params: float
    n_active_params: float
    layers: int
    hidden: int
    attn_width: float

    @classmethod
    def of(cls, arch: object) -> ModelShape:
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
    fabric_gbps_per_gpu: float | None = None,
    params: ThroughputParameters = CALIBRATED_PARAMETERS,
) -> Throughput:
    """Tokens/s per GPU, MFU and FLOPs per token of one training configuration.

    ``arch`` is a ``ModelArch`` (or a :class:`ModelShape`); ``gpus`` over 8 are whole nodes joined
    by ``fabric_gbps_per_gpu`` (default per GPU family, see DEFAULT_FABRIC_GBPS).
    """
    _check_config(method, sharding, gpus, seq_len, micro_batch)
    shape = arch if isinstance(arch, ModelShape) else ModelShape.of(arch)
    profile = gpu_profile(gpu_slug)
    cases = _cases_from_columns(
        shape=[shape],
        profile=[profile],
        method=np.array([method]),
        gpus=np.array([gpus], dtype=float),
        seq_len=np.array([seq_len], dtype=float),
        micro_batch=np.array([micro_batch], dtype=float),
        checkpointing=np.array([bool(grad_checkpointing)]),
        precision=np.array([precision]),
        sharding=np.array([sharding]),
        fabric=[fabric_gbps_per_gpu],
    )
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
    )


def _cases_from_columns(
    *,
    shape: Sequence[ModelShape],
    profile: Sequence[GpuProfile],
    method: np.ndarray,
    gpus: np.ndarray,
    seq_len: np.ndarray,
    micro_batch: np.ndarray,
    checkpointing: np.ndarray,
    precision: np.ndarray,
    sharding: np.ndarray,
    fabric: Sequence[float | None],
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
        precision_factor=np.array([precision_factor(p) for p in precision], dtype=float),
        peak_flops=np.array([p.peak_tflops * 1e12 for p in profile]),
        has_fp8=np.array([p.has_fp8 for p in profile]),
        memory_bw=np.array([p.memory_bandwidth_tbps * 1e12 for p in profile]),
        family=np.array([FAMILY_CODE[p.family] for p in profile], dtype=np.int64),
        gpus=gpus,
        busbw=busbw,
        comm_bytes_per_param=comm,
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
    """Vectorised :func:`predict_throughput` over a frame with FRAME_INPUT_COLUMNS.

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
    comm_u = np.array(
        [
            comm_bytes_per_param(
                methods[k // (len(shardings) * len(precisions))],
                shardings[(k // len(precisions)) % len(shardings)],
                precisions[k % len(precisions)],
            )
            for k in recipe_keys.tolist()
        ]
    )
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
        precision_factor=prec_u[precision_codes],
        peak_flops=per_gpu([p.peak_tflops * 1e12 for p in profiles]),
        has_fp8=per_gpu([p.has_fp8 for p in profiles], bool),
        memory_bw=per_gpu([p.memory_bandwidth_tbps * 1e12 for p in profiles]),
        family=per_gpu([FAMILY_CODE[p.family] for p in profiles], np.int64),
        gpus=gpu_counts[count_codes].astype(float),
        busbw=busbw_u[link_codes],
        comm_bytes_per_param=comm_u[recipe_codes],
    )
    result = evaluate(cases, params)
    return {name: getattr(result, name) for name in FRAME_OUTPUT_COLUMNS}


# --------------------------------------------------------------------------- benchmark rows
@dataclass(frozen=True)
class BenchmarkCase:
    """One row of a throughput_public.csv-style table, interpreted."""

    shape: ModelShape
    profile: GpuProfile
    method: str
    gpus: int
    seq_len: int
    micro_batch: int
    checkpointing: bool
    precision: str
    sharding: str


def _text(row: Mapping[str, object], key: str) -> str:
    value = row.get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def _number(row: Mapping[str, object], key: str) -> float | None:
    text = _text(row, key).replace(",", "")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def benchmark_gpu(raw: str) -> GpuProfile:
    """Map a benchmark's GPU text ("h100_80gb", "A100-40GB-SXM", "RTX 6000 Ada 48GB") to a profile."""
    from gpuprice.scrapers.gpu_names import UNKNOWN, normalize_gpu

    text = raw.replace("_", " ")
    slug = normalize_gpu(text)
    if slug != UNKNOWN:
        return gpu_profile(slug)
    lowered = re.sub(r"[^a-z0-9]+", " ", raw.lower())
    for pattern, name in _BENCHMARK_ONLY_PATTERNS:
        if re.search(pattern, lowered):
            return _BENCHMARK_ONLY_GPUS[name]
    raise BadInput(f"unknown benchmark GPU {raw!r}")


def _benchmark_method(workload: str, precision: str) -> str:
    text = workload.lower()
    if "qlora" in text:
        return "qlora"
    if "lora" in text:
        quantized = re.search(r"nf4|int4|4bit|gptq|bnb", precision.lower())
        return "qlora" if quantized else "lora"
    return "full"


def _benchmark_precision(precision: str) -> str:
    text = precision.lower()
    if "fp8" in text or "float8" in text:
        return "fp8"
    if "fp32" in text or "float32" in text or text == "tf32":
        return "fp32"
    return "bf16-mixed"  # bf16, amp_bf16, fp16 (same tensor rate), bf16+nf4, ...


def _benchmark_sharding(text: str, gpus: int) -> str:
    upper = text.upper()
    if re.search(r"\b(?:TP|PP)\s*([2-9]|\d\d+)", upper):
        return "model_parallel"
    if gpus <= 1:
        return "none"
    stage = re.search(r"(?:ZERO|STAGE)[\s_-]*([123])", upper)
    if stage:
        return {"1": "none", "2": "zero2", "3": "zero3"}[stage.group(1)]  # ZeRO-1 moves DDP's volume
    if "SHARD_GRAD_OP" in upper:
        return "zero2"
    if re.search(r"FULL_SHARD|HYBRID|FSDP", upper):
        return "fsdp"
    if re.search(r"\bTP\s*1\b", upper):
        return "model_parallel"  # Megatron without splitting: data parallel with distributed optimizer
    return "none"  # DDP, NO_SHARD, or not stated


# Published shapes of dense decoder families, (billions of parameters, layers, hidden): GPT-3
# (Brown et al. 2020, Table 2.1; MPT reuses them), Llama-2-70B and Llama-3.1-405B config.json.
# Small models are deeper than wide-and-shallow "h/L = 128" scaling suggests, which matters for
# the attention FLOPs at long context.
_PUBLISHED_SHAPES = np.array(
    [
        (0.125, 12, 768),
        (0.35, 24, 1024),
        (0.76, 24, 1536),
        (1.3, 24, 2048),
        (2.7, 32, 2560),
        (6.7, 32, 4096),
        (13.0, 40, 5120),
        (70.0, 80, 8192),
        (175.0, 96, 12288),
        (405.0, 126, 16384),
    ]
)
_SIZE_IN_NAME = re.compile(r"(?<![0-9.])(\d+(?:\.\d+)?)\s*([mb])\b", re.I)


def shape_from_size(params_b: float, nominal_b: float | None = None) -> ModelShape:
    """A dense shape for a model known only by size (log-interpolated published shapes).

    ``nominal_b`` (the size in the model's name, "MPT-125m") picks the shape when the reported
    count is inflated by, e.g., a learned position table sized for a long context.
    """
    size = nominal_b if nominal_b and 0.5 <= nominal_b / params_b <= 2 else params_b
    x = np.log(size)
    grid = np.log(_PUBLISHED_SHAPES[:, 0])
    slope_lo = (np.log(_PUBLISHED_SHAPES[1, 1:]) - np.log(_PUBLISHED_SHAPES[0, 1:])) / (grid[1] - grid[0])
    slope_hi = (np.log(_PUBLISHED_SHAPES[-1, 1:]) - np.log(_PUBLISHED_SHAPES[-2, 1:])) / (grid[-1] - grid[-2])
    if x < grid[0]:
        layers, hidden = np.exp(np.log(_PUBLISHED_SHAPES[0, 1:]) + slope_lo * (x - grid[0]))
    elif x > grid[-1]:
        layers, hidden = np.exp(np.log(_PUBLISHED_SHAPES[-1, 1:]) + slope_hi * (x - grid[-1]))
    else:
        layers = np.exp(np.interp(x, grid, np.log(_PUBLISHED_SHAPES[:, 1])))
        hidden = np.exp(np.interp(x, grid, np.log(_PUBLISHED_SHAPES[:, 2])))
    n = params_b * 1e9
    return ModelShape(
        n_params=n,
        n_active_params=n,
        layers=max(1, round(layers)),
        hidden=round(hidden),
        attn_width=float(round(hidden)),
    )


def _nominal_size_b(model: str) -> float | None:
    match = _SIZE_IN_NAME.search(model)
    if not match:
        return None
    value = float(match.group(1))
    return value / 1000 if match.group(2).lower() == "m" else value


def _benchmark_shape(model: str, params_b: float | None) -> ModelShape:
    from gpuprice.models.architectures import find_model

    arch = find_model(model) if model else None
    if arch is not None:
        shape = ModelShape.of(arch)
        # Trust the catalog only when it is the same model as the row's parameter count says.
        if params_b is None or abs(shape.n_params / 1e9 - params_b) <= 0.15 * params_b:
            return shape
    nominal = _nominal_size_b(model)
    params_b = params_b if params_b is not None else nominal
    if params_b is None:
        raise BadInput(f"benchmark row: model {model!r} is not in the catalog and params_b is empty")
    return shape_from_size(params_b, nominal)


def benchmark_case(row: Mapping[str, object]) -> BenchmarkCase:
    """Interpret one benchmark row (columns as in throughput_public.csv)."""
    gpus = int(_number(row, "gpu_count") or 1)
    precision_text = _text(row, "precision")
    checkpoint_text = _text(row, "act_ckpt").lower()
    return BenchmarkCase(
        shape=_benchmark_shape(_text(row, "model"), _number(row, "params_b")),
        profile=benchmark_gpu(_text(row, "gpu")),
        method=_benchmark_method(_text(row, "workload"), precision_text),
        gpus=gpus,
        seq_len=int(_number(row, "seq_len") or 2048),
        micro_batch=max(1, int(_number(row, "micro_batch") or 1)),
        checkpointing=checkpoint_text in ("true", "yes", "1", "full", "on"),
        precision=_benchmark_precision(precision_text),
        sharding=_benchmark_sharding(_text(row, "sharding"), gpus),
    )


def _cases_from_benchmarks(cases: Sequence[BenchmarkCase]) -> Cases:
    return _cases_from_columns(
        shape=[c.shape for c in cases],
        profile=[c.profile for c in cases],
        method=np.array([c.method for c in cases], dtype=object),
        gpus=np.array([c.gpus for c in cases], dtype=float),
        seq_len=np.array([c.seq_len for c in cases], dtype=float),
        micro_batch=np.array([c.micro_batch for c in cases], dtype=float),
        checkpointing=np.array([c.checkpointing for c in cases]),
        precision=np.array([c.precision for c in cases], dtype=object),
        sharding=np.array([c.sharding for c in cases], dtype=object),
        fabric=[None] * len(cases),
    )


def predict_from_benchmark_row(
    row: Mapping[str, object], params: ThroughputParameters = CALIBRATED_PARAMETERS
) -> float:
    """Predicted tokens/s per GPU for one row in the format of throughput_public.csv."""
    return float(evaluate(_cases_from_benchmarks([benchmark_case(row)]), params).tokens_per_sec_per_gpu[0])


def load_benchmark_rows(path: str) -> list[dict[str, object]]:
    """Rows of a benchmark CSV that report a per-GPU throughput (others cannot be scored)."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    rows = table.to_dict(orient="records")
    return [r for r in rows if _number(r, "tokens_per_sec_per_gpu")]


# --------------------------------------------------------------------------- calibration
def _nelder_mead(
    f: Callable[[np.ndarray], float], x0: np.ndarray, *, iterations: int, step: float
) -> np.ndarray:
    """Minimise f from x0 (derivative-free: the objective has kinks from max() and medians)."""
    n = len(x0)
    simplex = np.vstack([x0] + [x0 + step * np.eye(n)[i] for i in range(n)])
    values = np.array([f(x) for x in simplex])
    for _ in range(iterations):
        order = np.argsort(values)
        simplex, values = simplex[order], values[order]
        centroid = simplex[:-1].mean(axis=0)
        reflected = centroid + (centroid - simplex[-1])
        f_reflected = f(reflected)
        if f_reflected < values[0]:
            expanded = centroid + 2.0 * (centroid - simplex[-1])
            f_expanded = f(expanded)
            simplex[-1], values[-1] = (
                (expanded, f_expanded) if f_expanded < f_reflected else (reflected, f_reflected)
            )
        elif f_reflected < values[-2]:
            simplex[-1], values[-1] = reflected, f_reflected
        else:
            contracted = centroid + 0.5 * (simplex[-1] - centroid)
            f_contracted = f(contracted)
            if f_contracted < values[-1]:
                simplex[-1], values[-1] = contracted, f_contracted
            else:
                simplex = simplex[0] + 0.5 * (simplex - simplex[0])
                values = np.array([f(x) for x in simplex])
    return simplex[int(np.argmin(values))]


_GLOBAL_FIELDS = (
    "half_width",
    "attention_efficiency",
    "hopper_attention_factor",
    "layer_overhead_ms",
    "dequant_bytes_per_param",
    "fp8_speedup",
    "lora_efficiency",
    "node_scaling_loss",
    "comm_overlap",
)


def fit_parameters(
    rows: Sequence[Mapping[str, object]],
    start: ThroughputParameters = PRIOR_PARAMETERS,
    *,
    fixed: Collection[str] = (),
    iterations: int = 3000,
    restarts: int = 2,
) -> ThroughputParameters:
    """Calibrate the model's constants on benchmark rows (minimises mean |log(pred/measured)|).

    Families absent from ``rows`` and the global parameters named in ``fixed`` keep ``start``'s
    values. Everything is fitted in log space (all are positive); ``comm_overlap`` is capped at 1.
    """
    cases = [benchmark_case(r) for r in rows]
    measured = np.array([_number(r, "tokens_per_sec_per_gpu") for r in rows], dtype=float)
    batch = _cases_from_benchmarks(cases)
    families = [f for f in start.family_efficiency if f in {c.profile.family for c in cases}]
    free = [name for name in _GLOBAL_FIELDS if name not in fixed]

    def unpack(x: np.ndarray) -> ThroughputParameters:
        values = np.exp(x)
        table = dict(start.family_efficiency)
        table.update({f: float(v) for f, v in zip(families, values[: len(families)], strict=True)})
        update = dict(zip(free, (float(v) for v in values[len(families) :]), strict=True))
        if "comm_overlap" in update:
            update["comm_overlap"] = min(update["comm_overlap"], 1.0)
        return start.model_copy(update={"family_efficiency": table, **update})

    def loss(x: np.ndarray) -> float:
        predicted = evaluate(batch, unpack(x)).tokens_per_sec_per_gpu
        return float(np.mean(np.abs(np.log(predicted / measured))))

    floor = 1e-4  # a parameter may fit to ~0 (e.g. the node loss); keep it finite in log space
    x = np.log([start.family_efficiency[f] for f in families] + [max(getattr(start, n), floor) for n in free])
    for _ in range(restarts):
        x = _nelder_mead(loss, x, iterations=iterations, step=0.15)
    return unpack(x)


def absolute_percentage_errors(
    rows: Sequence[Mapping[str, object]], params: ThroughputParameters = CALIBRATED_PARAMETERS
) -> np.ndarray:
    """|predicted / measured - 1| for each row (the accuracy statistic of mfu_calibration.md)."""
    batch = _cases_from_benchmarks([benchmark_case(r) for r in rows])
    measured = np.array([_number(r, "tokens_per_sec_per_gpu") for r in rows], dtype=float)
    return np.abs(evaluate(batch, params).tokens_per_sec_per_gpu / measured - 1.0)
