"""GPU hardware facts the throughput model needs: family, dense peak, links (NVLink, PCIe, fabric).

Every GPU comes from ``models/gpu_catalog.csv`` (the parts once listed here for benchmarks only,
H20 and MI250X, are catalog rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pandas as pd

from gpuprice.models.choices import GPUS_PER_NODE

GpuFamily = Literal[
    "ampere_datacenter",  # A100 (HBM)
    "hopper",  # H100, H200, GH200
    "blackwell",  # B200, B300, GB200
    "ampere_workstation",  # A10, A40, RTX A5000/A6000
    "ada_workstation",  # L4, L40, L40S, RTX 6000 Ada (power-capped AD10x)
    "geforce",  # RTX 3090/4090/5090 (half-rate FP32-accumulate tensor math)
    "blackwell_workstation",  # RTX PRO 6000 Blackwell (GB202, full-rate, power-bound at 600 W)
    "blackwell_workstation_max_q",  # the same board capped at 300 W (RTX PRO 6000 Max-Q)
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
    "blackwell_workstation",
    "blackwell_workstation_max_q",
    "volta",
    "turing",
    "cdna",
)
FAMILY_CODE = {family: code for code, family in enumerate(ALL_FAMILIES)}
# A family gets its own efficiency only where at least MIN_FAMILY_RUNS measured runs from at least
# MIN_FAMILY_SOURCES independent source families support it (throughput_public.csv: ampere_datacenter
# 76 runs / 4 sources, hopper 30 / 5). The workstation and GeForce cards have 2-4 runs, all from
# Answer.AI's fsdp_qlora table: they borrow the nearest supported family (the Ampere data-centre
# part, the same CUDA / FlashAttention-2 stack) at ratio 1, an assumption with a wider band
# (mfu_calibration.md). Families without public training measurements borrow a sibling too:
# Blackwell runs the Hopper software stack; V100 lacks FlashAttention-2 and BF16; T4 is a 70 W
# inference card; ROCm training reaches a lower share of the (much higher) MI300X peak.
MIN_FAMILY_RUNS, MIN_FAMILY_SOURCES = 3, 2
# The RTX PRO 6000 Blackwell (GB202) runs FP32-accumulate tensor math at full rate (1,024 FLOP per
# SM per clock, waynehacking8/blackwell-tensorcore-kernels results/mma_rate_probe.csv @c289bded),
# but its 503.8 TFLOPS is at boost clock, which a 600 W board does not hold under sustained matmul:
# torch.matmul bf16 8192^3 rises linearly with the power limit with no plateau, 120 TFLOPS at 240 W
# to about 317 at 600 W (1a1a11a/gpu_power figures/tflops_vs_power.png @ab312b33, read off the
# chart; 386 after that repository's clock optimiser, which a rented board does not run), 63 % of
# the datasheet. cuBLAS on an H100 SXM reaches 750-762 of 989 (77 %) at 8192^3 (waynehacking8 results/
# bench_sm90a.csv). The card borrows Hopper's efficiency (the same compute-to-bandwidth balance,
# ~280 FLOP/B) scaled by the ratio of the two sustained GEMM shares, not Ampere's at ratio 1.
# The 300 W Max-Q edition, measured on that card: cuBLAS FP16 (FP32 accumulate) at 8192^3 225.75
# TFLOPS (waynehacking8 results/bench.csv) of its 440.4 boost-clock peak, 51 %.
# Sustained dense matmul at 8192^3 (TFLOPS) as measured on each card; its share is over the
# catalog's datasheet peak of the same card.
SUSTAINED_MATMUL_TFLOPS = {"rtx-pro-6000": 317.0, "rtx-pro-6000-maxq": 225.75, "h100-sxm": 756.0}


def sustained_matmul_share(slug: str) -> float:
    """Measured sustained matmul over the catalog's dense BF16 peak of ``slug``."""
    from gpuprice.models.catalog import get_gpu

    return SUSTAINED_MATMUL_TFLOPS[slug] / get_gpu(slug).dense_bf16_tflops


def _share_of_hopper(slug: str) -> float:
    return sustained_matmul_share(slug) / sustained_matmul_share("h100-sxm")


ASSUMED_FAMILY_RATIOS: dict[GpuFamily, tuple[GpuFamily, float]] = {
    "ampere_workstation": ("ampere_datacenter", 1.0),
    "ada_workstation": ("ampere_datacenter", 1.0),
    "geforce": ("ampere_datacenter", 1.0),
    "blackwell_workstation": ("hopper", _share_of_hopper("rtx-pro-6000")),
    "blackwell_workstation_max_q": ("hopper", _share_of_hopper("rtx-pro-6000-maxq")),
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
# A stated network between nodes (e.g. "400 Gbps per node", "8 x 400G") above this is no NIC set.
MAX_NODE_NETWORK_GBPS = 102_400.0


def fabric_per_gpu(node_gbps: float) -> float:
    """A node's aggregate network (Gb/s, all its NICs) as the model's per-GPU fabric figure."""
    return node_gbps / GPUS_PER_NODE


# FP32 on the CUDA cores (no tensor cores) as a share of the dense BF16 tensor peak, per family,
# from the datasheets' FP32 and dense BF16 figures. It is the rate of fp32 matmuls as PyTorch runs
# them by default: ``torch.backends.cuda.matmul.allow_tf32`` is False since PyTorch 1.12 (TF32
# only when a trainer or user turns it on), so a job trained in fp32 runs its GEMMs here.
#   A100 19.5 / 312; H100 SXM 67 / 989 (PCIe 51 / 756); B200 ~75 / 2250 (HGX B200: 600 TFLOPS FP32
#   per 8 GPUs); A6000 38.7 / 154.8, A10 31.2 / 125; L40S 91.6 / 362, RTX 6000 Ada 91.1 / 364;
#   RTX PRO 6000 Blackwell ~126 / 503.8; V100 15.7 / 125; T4 8.1 / 65; MI300X 163.4 / 1307.4.
# GeForce cards (form factor "consumer") run FP32-accumulate tensor math at half rate, so their
# CUDA-core FP32 is half the dense BF16 figure (RTX 4090 82.6 / 165.2, 5090 104.8 / 209.5, 3090
# 35.6 / 71).
FP32_SHARE: dict[GpuFamily, float] = {
    "ampere_datacenter": 19.5 / 312,
    "hopper": 67.0 / 989,
    "blackwell": 75.0 / 2250,
    "ampere_workstation": 0.25,
    "ada_workstation": 0.25,
    "geforce": 0.25,
    "blackwell_workstation": 0.25,
    "blackwell_workstation_max_q": 0.25,
    "volta": 0.125,
    "turing": 0.125,
    "cdna": 0.125,
}
CONSUMER_FP32_SHARE = 0.5


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


def fp32_share(profile: GpuProfile) -> float:
    """FP32 CUDA-core peak / dense BF16 tensor peak of a GPU (see FP32_SHARE)."""
    return CONSUMER_FP32_SHARE if profile.form_factor == "consumer" else FP32_SHARE[profile.family]


# At or under this board power a GB202 workstation card is the Max-Q edition.
MAX_Q_BOARD_POWER_W = 300.0


def _family_of(
    architecture: str, form_factor: str, memory_bandwidth_tbps: float, board_power_w: float | None = None
) -> GpuFamily:
    arch = architecture.lower()
    # Parts without BF16 tensor math (Pascal, Volta, Turing) run the FP16 / no-FlashAttention-2
    # stack whatever their form factor (a GeForce RTX 2080 Ti or TITAN RTX is Turing, not
    # "geforce"); Pascal (P100, P40) has no family of its own and reads as its successor, Volta.
    if arch in ("volta", "turing"):
        return arch  # type: ignore[return-value]
    if arch == "pascal":
        return "volta"
    if form_factor == "consumer":
        return "geforce"
    if arch == "ampere":
        return "ampere_datacenter" if memory_bandwidth_tbps >= 1.2 else "ampere_workstation"
    if arch == "ada":
        return "ada_workstation"
    if arch == "hopper":
        return "hopper"
    if arch == "blackwell":
        if form_factor in ("sxm", "superchip"):
            return "blackwell"
        max_q = board_power_w is not None and board_power_w <= MAX_Q_BOARD_POWER_W
        return "blackwell_workstation_max_q" if max_q else "blackwell_workstation"
    if arch.startswith("cdna"):
        return "cdna"
    raise ValueError(f"no throughput family for architecture {architecture!r}")


def _pcie_of(architecture: str, form_factor: str) -> str:
    if form_factor == "consumer":
        return "no_p2p"
    if architecture.lower() in ("hopper", "blackwell") or architecture.lower().startswith("cdna"):
        return "gen5"
    if architecture.lower() in ("pascal", "volta", "turing"):
        return "gen3"
    return "gen4"


def gpu_profile(slug: str) -> GpuProfile:
    """The throughput-relevant facts of a catalog GPU. Every part a benchmark row names is a
    catalog row (the H800 / A800 export variants, H20 and MI250X per GCD joined the catalog)."""
    return _catalog_profiles()[slug] if slug in _catalog_profiles() else _raise_unknown_gpu(slug)


def _raise_unknown_gpu(slug: str) -> GpuProfile:
    from gpuprice.models.catalog import get_gpu

    get_gpu(slug)  # raises BadInput naming close matches
    raise AssertionError("unreachable")


_PROFILE_CACHE: dict[str, GpuProfile] = {}


def _catalog_profiles() -> dict[str, GpuProfile]:
    if not _PROFILE_CACHE:
        from gpuprice.models.catalog import load_gpu_catalog

        for row in load_gpu_catalog().to_dict(orient="records"):
            slug, architecture, form = str(row["slug"]), str(row["architecture"]), str(row["form_factor"])
            nvlink = None if pd.isna(row["nvlink_gbps"]) else float(row["nvlink_gbps"])
            bandwidth = float(row["memory_bandwidth_tbps"])
            _PROFILE_CACHE[slug] = GpuProfile(
                slug=slug,
                family=_family_of(
                    architecture, form, bandwidth, None if pd.isna(row["tdp_w"]) else float(row["tdp_w"])
                ),
                peak_tflops=float(row["dense_bf16_tflops"]),
                has_fp8=not pd.isna(row["dense_fp8_tflops"]),
                memory_bandwidth_tbps=bandwidth,
                nvlink_gbps=nvlink,
                form_factor=form,
                pcie=_pcie_of(architecture, form),
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
