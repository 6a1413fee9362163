"""normalize_gpu on real provider strings, the documented traps, and names it must not guess."""

from __future__ import annotations

import csv

import pytest

from conftest import OBSERVED_PRICES
from gpuprice.models.catalog import gpu_slugs
from gpuprice.scrapers.gpu_names import UNKNOWN, normalize_gpu

# (provider, gpu) exactly as the `gpu` column of /work/shared/data/observed_prices.csv writes it.
OBSERVED: list[tuple[str, str, str]] = [
    ("coreweave", "A100 SXM 80GB", "a100-80gb-sxm"),
    ("coreweave", "B200", "b200"),
    ("coreweave", "GB200", "gb200"),
    ("coreweave", "GH200", "gh200"),
    ("coreweave", "H100 PCIe", "h100-pcie"),
    ("coreweave", "H100 SXM", "h100-sxm"),
    ("coreweave", "H200 SXM", "h200-sxm"),
    ("coreweave", "L40", "l40"),
    ("coreweave", "L40S", "l40s"),
    ("crusoe", "A100 PCIe 40GB", "a100-40gb"),
    ("crusoe", "A100 PCIe 80GB", "a100-80gb-pcie"),
    ("crusoe", "A100 SXM 80GB", "a100-80gb-sxm"),
    ("crusoe", "A40", "a40"),
    ("crusoe", "H100 SXM", "h100-sxm"),
    ("crusoe", "H200 SXM", "h200-sxm"),
    ("crusoe", "L40S", "l40s"),
    ("crusoe", "MI300X", "mi300x"),
    ("lambda", "A10", "a10"),
    ("lambda", "A100 40GB", "a100-40gb"),
    ("lambda", "A100 SXM 40GB", "a100-40gb"),
    ("lambda", "A100 SXM 80GB", "a100-80gb-sxm"),
    ("lambda", "A6000", "a6000"),
    ("lambda", "B200", "b200"),
    ("lambda", "GH200", "gh200"),
    ("lambda", "H100 PCIe", "h100-pcie"),
    ("lambda", "H100 SXM", "h100-sxm"),
    # Massed Compute's bare A100 80GB: no provider rule, so the most common part (SXM); its
    # $1.35 on 2026-09-08 also equals Massed's A100 SXM 80GB list price of 2026-08-30.
    ("massedcompute", "A100 80GB", "a100-80gb-sxm"),
    ("massedcompute", "A100 PCIe 80GB", "a100-80gb-pcie"),
    ("massedcompute", "A100 SXM 80GB", "a100-80gb-sxm"),
    ("massedcompute", "A6000", "a6000"),
    ("massedcompute", "B200", "b200"),
    ("massedcompute", "B300", "b300"),
    ("massedcompute", "H100", "h100-pcie"),  # provider-pages.md: gpu_1x_h100 is the PCIe card
    ("massedcompute", "H100 NVL", "h100-nvl"),
    ("massedcompute", "H100 PCIe", "h100-pcie"),
    ("massedcompute", "H100 SXM", "h100-sxm"),
    ("massedcompute", "H200 NVL", "h200-nvl"),
    ("massedcompute", "L40", "l40"),
    ("massedcompute", "L40S", "l40s"),
    ("nebius", "B200", "b200"),
    ("nebius", "B300", "b300"),
    ("nebius", "H100 SXM", "h100-sxm"),
    ("nebius", "H200 SXM", "h200-sxm"),
    ("nebius", "L40S", "l40s"),
    ("runpod", "A100 PCIe 80GB", "a100-80gb-pcie"),
    ("runpod", "A100 SXM 80GB", "a100-80gb-sxm"),
    ("runpod", "B200", "b200"),
    ("runpod", "B300", "b300"),
    ("runpod", "H100 NVL", "h100-nvl"),
    ("runpod", "H100 PCIe", "h100-pcie"),
    ("runpod", "H100 SXM", "h100-sxm"),
    ("runpod", "H200 SXM", "h200-sxm"),
    ("runpod", "L40", "l40"),
    ("runpod", "L40S", "l40s"),
]

# Names from /work/shared/reference/provider-pages.md and the SKU names quoted in the notes of
# observed_prices.csv, as the provider pages write them.
PROVIDER_PAGES: list[tuple[str | None, str, str]] = [
    ("runpod", "NVIDIA H100 80GB HBM3", "h100-sxm"),  # Runpod gpuTypes id of the SXM card
    ("runpod", "H100 SXM", "h100-sxm"),  # its displayName
    ("lambda", "On-demand 8x NVIDIA H100 SXM", "h100-sxm"),
    ("coreweave", "NVIDIA HGX B200", "b200"),
    ("coreweave", "HGX H100", "h100-sxm"),
    ("nebius", "NVIDIA HGX H100", "h100-sxm"),
    ("crusoe", "NVIDIA H100", "h100-sxm"),  # Crusoe card heading; HGX tag
    ("crusoe", "NVIDIA H100 HGX 80GB", "h100-sxm"),
    ("massedcompute", "gpu_1x_h100", "h100-pcie"),
    ("massedcompute", "gpu_2x_h100", "h100-pcie"),
    ("massedcompute", "gpu_1x_h200_nvl", "h200-nvl"),
    ("massedcompute", "gpu_2x_h200_nvl", "h200-nvl"),
    ("massedcompute", "gpu_1x_l40s", "l40s"),
    ("massedcompute", "H100 80GB PCIe", "h100-pcie"),
    ("massedcompute", "H100 SXM5", "h100-sxm"),
    ("massedcompute", "B200 SXM6", "b200"),
    ("massedcompute", "H200", "h200-nvl"),  # "the cheap H200 is the NVL part"
]

# Raw names the brief lists (provider-independent spellings of real pages and APIs).
BRIEF: list[tuple[str | None, str, str]] = [
    (None, "NVIDIA HGX H100", "h100-sxm"),
    (None, "H100 SXM5 80GB", "h100-sxm"),
    (None, "H100 80GB HBM3", "h100-sxm"),
    (None, "H100 PCIe", "h100-pcie"),
    (None, "H100 NVL", "h100-nvl"),
    ("massedcompute", "gpu_8x_h100_sxm5", "h100-sxm"),
    (None, "H200 NVL", "h200-nvl"),
    (None, "NVIDIA H200", "h200-sxm"),
    (None, "B200 (180 GB)", "b200"),
    (None, "RTX PRO 6000", "rtx-pro-6000"),
    (None, "RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"),
    (None, "GH200", "gh200"),
    (None, "GB200 NVL72", "gb200"),
    (None, "NVIDIA GB200", "gb200"),
    (None, "A100 SXM4 80GB", "a100-80gb-sxm"),
    (None, "A100 PCIe 40GB", "a100-40gb"),
    (None, "A100 80GB PCIe", "a100-80gb-pcie"),
    (None, "NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"),
    (None, "A100 (40 GB)", "a100-40gb"),
    (None, "RTX 6000 Ada", "rtx-6000-ada"),
    (None, "RTX A6000", "a6000"),
    (None, "L4", "l4"),
    (None, "MI300X", "mi300x"),
    (None, "AMD Instinct MI300X OAM", "mi300x"),
    (None, "Tesla V100-SXM2-32GB", "v100"),
    (None, "RTX 4090", "rtx-4090"),
    (None, "GeForce RTX 5090", "rtx-5090"),
]

# Runpod displayNames and gpuTypes ids (GraphQL), and Lambda/CoreWeave/Nebius/Crusoe spellings.
RUNPOD: list[tuple[str | None, str, str]] = [
    ("runpod", "H100 PCIe", "h100-pcie"),
    ("runpod", "H100 NVL", "h100-nvl"),
    ("runpod", "H200 NVL", "h200-nvl"),
    ("runpod", "RTX 6000 Ada", "rtx-6000-ada"),
    ("runpod", "A100 SXM", "a100-80gb-sxm"),
    ("runpod", "A100 PCIe", "a100-80gb-pcie"),
    ("runpod", "RTX A6000", "a6000"),
    ("runpod", "RTX 4090", "rtx-4090"),
    ("runpod", "RTX 5090", "rtx-5090"),
    ("runpod", "RTX PRO 6000", "rtx-pro-6000"),
    ("runpod", "NVIDIA H100 PCIe", "h100-pcie"),
    ("runpod", "NVIDIA H100 NVL", "h100-nvl"),
    ("runpod", "NVIDIA H200", "h200-sxm"),
    ("runpod", "NVIDIA H200 NVL", "h200-nvl"),
    ("runpod", "NVIDIA B200", "b200"),
    ("runpod", "NVIDIA A100 80GB PCIe", "a100-80gb-pcie"),
    ("runpod", "NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"),
    ("runpod", "NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"),
    ("runpod", "NVIDIA RTX A6000", "a6000"),
    ("runpod", "NVIDIA GeForce RTX 4090", "rtx-4090"),
    ("runpod", "NVIDIA GeForce RTX 5090", "rtx-5090"),
    ("runpod", "NVIDIA GeForce RTX 3090", "rtx-3090"),
    ("runpod", "NVIDIA L40S", "l40s"),
    ("runpod", "NVIDIA L40", "l40"),
    ("runpod", "NVIDIA L4", "l4"),
    ("runpod", "NVIDIA A40", "a40"),
    ("runpod", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"),
    ("runpod", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000"),
    # the 300 W edition (ewyluda/gpu-price-index runpod.json @d789fed5: id and displayName)
    ("runpod", "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "rtx-pro-6000-maxq"),
    ("runpod", "RTX PRO 6000 MaxQ", "rtx-pro-6000-maxq"),
    ("runpod", "Tesla V100-PCIE-16GB", "v100-16gb"),
    ("runpod", "NVIDIA RTX A5000", "a5000"),
    ("runpod", "NVIDIA RTX A4500", "a4500"),
    ("runpod", "NVIDIA RTX A4000", "a4000"),
    ("runpod", "NVIDIA RTX 4000 Ada Generation", "rtx-4000-ada"),
    ("runpod", "NVIDIA RTX 5000 Ada Generation", "rtx-5000-ada"),
    ("runpod", "NVIDIA RTX 2000 Ada Generation", "rtx-2000-ada"),
    ("runpod", "NVIDIA A30", "a30"),
    ("runpod", "RTX A5000", "a5000"),
    ("runpod", "RTX 4000 Ada", "rtx-4000-ada"),
    ("runpod", "Tesla V100-SXM2-16GB", "v100-16gb"),
    ("lambda", "On-demand 1x NVIDIA GH200", "gh200"),
    ("lambda", "On-demand 8x NVIDIA B200", "b200"),
    ("lambda", "On-demand 1x NVIDIA H100 PCIe", "h100-pcie"),
    ("lambda", "On-demand 1x NVIDIA A10", "a10"),
    ("aws", "NVIDIA A10G", "a10g"),  # EC2 G5 (aws.amazon.com/ec2/instance-types/g5/)
    (None, "A10G", "a10g"),  # nvidia-smi's name on g5 / Modal (modal-client PR #2797)
    (None, "A10G-24GB", "a10g"),  # litgpt config_hub/finetune/README.md writes it so
    (None, "NVIDIA A800-SXM4-80GB", "a800"),  # nvidia-smi name of the export A100 (ms-swift, XTuner runs)
    (None, "A800 80GB", "a800"),
    (None, "NVIDIA H800", "h800"),
    (None, "H800 80GB HBM3", "h800"),
    ("lambda", "On-demand 1x NVIDIA RTX A6000", "a6000"),
    ("lambda", "gpu_1x_a100_sxm4", "a100-40gb"),  # Lambda's un-sized A100 SKUs are 40 GB
    ("lambda", "gpu_8x_a100_80gb_sxm4", "a100-80gb-sxm"),
    ("lambda", "gpu_8x_h100_sxm5", "h100-sxm"),
    ("lambda", "gpu_1x_gh200", "gh200"),
    ("coreweave", "NVIDIA HGX H200", "h200-sxm"),
    ("coreweave", "NVIDIA GB200 NVL72", "gb200"),
    ("coreweave", "NVIDIA GH200", "gh200"),
    ("coreweave", "A100 80GB NVLINK", "a100-80gb-sxm"),
    ("coreweave", "Tesla V100 NVLINK", "v100"),
    ("nebius", "NVIDIA HGX B300", "b300"),
    ("nebius", "NVIDIA L40S (Intel)", "l40s"),
    ("crusoe", "AMD MI300X", "mi300x"),
    ("crusoe", "NVIDIA A100 80GB PCIe", "a100-80gb-pcie"),
]

CASES = OBSERVED + PROVIDER_PAGES + BRIEF + RUNPOD


def test_at_least_80_real_strings() -> None:
    assert len({(p, raw) for p, raw, _ in CASES}) >= 80


@pytest.mark.parametrize(("provider", "raw", "expected"), CASES)
def test_real_names(provider: str | None, raw: str, expected: str) -> None:
    assert normalize_gpu(raw, provider=provider) == expected


def test_expected_slugs_exist_in_catalog() -> None:
    assert {expected for _, _, expected in CASES} <= set(gpu_slugs())


def test_every_observed_price_row_maps_to_a_catalog_gpu() -> None:
    with OBSERVED_PRICES.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    slugs = set(gpu_slugs())
    for row in rows:
        assert normalize_gpu(row["gpu"], provider=row["provider"]) in slugs, row


@pytest.mark.parametrize(
    ("raw", "wrong", "right"),
    [
        ("NVIDIA GB200", "b200", "gb200"),
        ("GB200 NVL72", "b200", "gb200"),
        ("B200 NVL72", "b200", "gb200"),  # NVL72 racks are built from GB200 superchips
        ("GH200", "h200", "gh200"),
        ("NVIDIA GH200 Grace Hopper Superchip (H100 GPU)", "h100-sxm", "gh200"),
        ("GB200 Grace Blackwell Superchip (2x B200)", "b200", "gb200"),
        ("NVIDIA GH200 Grace Hopper Superchip", "h200-sxm", "gh200"),
        ("H100 NVL", "h100-sxm", "h100-nvl"),
        ("H100 94GB", "h100-sxm", "h100-nvl"),
        ("H200 NVL", "h200-sxm", "h200-nvl"),
        ("RTX 6000 Ada", "rtx-pro-6000", "rtx-6000-ada"),
        ("RTX 6000 Ada", "a6000", "rtx-6000-ada"),
        ("RTX A6000 Ada", "a6000", "rtx-6000-ada"),  # common misnomer for the Ada card
        ("RTX PRO 6000", "rtx-6000-ada", "rtx-pro-6000"),
        ("RTX A6000", "rtx-6000-ada", "a6000"),
        ("RTX A5000", "rtx-5000-ada", "a5000"),
        ("RTX 5000 Ada", "a5000", "rtx-5000-ada"),
        ("RTX A4000", "rtx-4000-ada", "a4000"),
        ("A30", "a10", "a30"),
        ("L40", "l40s", "l40"),
        ("L40S", "l40", "l40s"),
        ("L4", "l40", "l4"),
        ("A10", "a100-80gb-sxm", "a10"),
        ("A10G", "a10", "a10g"),
        ("NVIDIA A10G", "a10", "a10g"),
        ("A10", "a10g", "a10"),
        ("H100 PCIe", "h100-sxm", "h100-pcie"),
    ],
)
def test_traps(raw: str, wrong: str, right: str) -> None:
    result = normalize_gpu(raw)
    assert result != wrong
    assert result == right


@pytest.mark.parametrize(
    ("raw", "provider", "vram_gb", "expected"),
    [
        ("A100", None, 40, "a100-40gb"),
        ("A100", None, 80, "a100-80gb-sxm"),
        ("A100 SXM", None, 40, "a100-40gb"),
        ("A100 PCIe", None, 40, "a100-40gb"),
        ("A100 PCIe", None, 80, "a100-80gb-pcie"),
        ("HGX A100", None, 80, "a100-80gb-sxm"),
        ("A100 80GB", None, None, "a100-80gb-sxm"),
        ("A100", "lambda", None, "a100-40gb"),
        ("A100 SXM", "lambda", 80, "a100-80gb-sxm"),
        ("A100 40GB", None, 80, "a100-40gb"),  # the name's own size beats another column
        ("H100", None, None, "h100-sxm"),
        ("H100", "lambda", None, "h100-sxm"),
        ("H100", "coreweave", None, "h100-sxm"),
        ("H100", "nebius", None, "h100-sxm"),
        ("H100", "crusoe", None, "h100-sxm"),
        ("H100", "massedcompute", None, "h100-pcie"),
        ("H100", "massedcompute", 94, "h100-nvl"),
        ("H100 80GB HBM2e", None, None, "h100-pcie"),
        ("gpu_8x_h100_sxm5", "massedcompute", None, "h100-sxm"),
        ("H200", "massedcompute", None, "h200-nvl"),
        ("gpu_8x_h200_sxm5", "massedcompute", None, "h200-sxm"),
        ("H200", "nebius", None, "h200-sxm"),
        ("H200 PCIe", None, None, "h200-nvl"),  # H200's PCIe card is the NVL
        ("RTX 6000", None, 48, "rtx-6000-ada"),
        ("RTX 6000", None, 96, "rtx-pro-6000"),
        ("RTX 6000", None, 24, UNKNOWN),  # Turing Quadro RTX 6000
        ("RTX 5000", None, 32, "rtx-5000-ada"),
        ("RTX 5000", None, 16, UNKNOWN),  # Turing Quadro RTX 5000
        ("RTX 4000", None, 20, "rtx-4000-ada"),
        ("Tesla V100", None, 16, "v100-16gb"),
        ("Tesla V100", None, 32, "v100"),
        ("MI300", None, 192, "mi300x"),
        # NVLink next to PCIe/NVL is a bridge between cards, on its own it is the SXM board.
        ("A100 80GB NVLINK", None, None, "a100-80gb-sxm"),
        ("A100 PCIe NVLink bridge", None, 80, "a100-80gb-pcie"),
        ("H100 PCIe NVLink", None, None, "h100-pcie"),
        ("H100 NVLink", None, None, "h100-sxm"),
        ("H200 NVL 2-way NVLink", None, None, "h200-nvl"),
        # System RAM and disk sizes are not GPU memory.
        ("1x A100 PCIe, 200 GB RAM, 40 GB VRAM", None, None, "a100-40gb"),
        ("A100 PCIe 512 GB SSD", "lambda", None, "a100-40gb"),
        # Loose provider names select the same conventions.
        ("A100", "Lambda Labs", None, "a100-40gb"),
        ("H100", "Massed Compute", None, "h100-pcie"),
    ],
)
def test_form_factor_and_memory_rules(
    raw: str, provider: str | None, vram_gb: float | None, expected: str
) -> None:
    assert normalize_gpu(raw, provider=provider, vram_gb=vram_gb) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        "Quantum Widget 9000",
        "Quantum Widget 4090",  # a bare number only counts with nothing else around it
        "TPU v5e",
        "Intel Gaudi 2",
        "GB300 NVL72",
        "NVIDIA A800 40GB Active",  # a PCIe workstation card, not the 80 GB export A100
        "RTX A2000",
        "RTX 4500 Ada",
        "NVIDIA RTX 4000 SFF Ada Generation",  # 70 W small-form-factor card, not the RTX 4000 Ada
        "RTX PRO 4000 Blackwell",
        "Quadro RTX 6000",  # Turing, 24 GB
        "Quadro RTX 5000",
        "RTX 4000 Ada vs RTX 6000 Ada",
        "RTX 4090 D",
        "RTX 4070 Ti",  # the catalog holds the 4070 Ti SUPER only
        "RTX 4060 Ti",  # 8 or 16 GB under one name: the size must be stated
        "RTX 2080",  # only the 2080 Ti is catalogued
        "H20 141GB",  # the HBM3e edition; h20 is the 96 GB card
        "Tesla P100-SXM2-16GB",  # the catalog holds the PCIe card
        "a2-highgpu-1g",  # Google Cloud machine type with A100s, not an A2 card
        "MI300A",
        "A100 MIG 1g.10gb",
        "H100 or A100",
        "H100 SXM PCIe",  # contradictory form factors
        "Contact sales",
        "RTX PRO 5000 Max-Q",  # the catalog holds no PRO 5000 (nor its 300 W edition)
    ],
)
def test_unknown_names_are_never_guessed(raw: str) -> None:
    assert normalize_gpu(raw) == UNKNOWN
    # Provider and memory hints refine a recognised model; they never invent one.
    assert normalize_gpu(raw, provider="massedcompute", vram_gb=80) == UNKNOWN


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("h100 sxm", "h100-sxm"),
        ("H100-SXM", "h100-sxm"),
        ("H100_SXM", "h100-sxm"),
        ("  H100   SXM  ", "h100-sxm"),
        ("H100SXM5", "h100-sxm"),
        ("8xH100 SXM", "h100-sxm"),
        ("NVIDIA H100 SXM", "h100-sxm"),
        ("On-demand 8x NVIDIA H100 SXM", "h100-sxm"),
        ("l40s", "l40s"),
        ("NVIDIA  L40S", "l40s"),
        ("rtx6000ada", "rtx-6000-ada"),
        ("RTXPRO6000", "rtx-pro-6000"),
        ("GeForce RTX-4090", "rtx-4090"),
        ("rtx4090", "rtx-4090"),
        ("1x 4090 24GB", "rtx-4090"),
        ("Tesla V100", "v100"),
        ("AMD Instinct MI300X", "mi300x"),
        ("H100-80G-PCIe", "h100-pcie"),
        ("a100 40g", "a100-40gb"),
    ],
)
def test_case_whitespace_punctuation_and_prefixes_are_ignored(raw: str, expected: str) -> None:
    assert normalize_gpu(raw) == expected


@pytest.mark.parametrize(("provider", "raw", "expected"), CASES)
def test_spelling_variants_of_real_names_agree(provider: str | None, raw: str, expected: str) -> None:
    for variant in (raw.upper(), raw.lower(), raw.replace(" ", "_"), f"  {raw}  ", raw.replace(" ", "  ")):
        assert normalize_gpu(variant, provider=provider) == expected, variant


def test_provider_hint_is_case_insensitive() -> None:
    assert normalize_gpu("gpu_1x_h100", provider="MassedCompute") == "h100-pcie"
    assert normalize_gpu("gpu_1x_h100", provider=" massedcompute ") == "h100-pcie"


def test_unknown_provider_uses_the_provider_independent_default() -> None:
    assert normalize_gpu("H100", provider="some-new-cloud") == "h100-sxm"


def test_meaningless_memory_hints_are_ignored() -> None:
    assert normalize_gpu("A100", provider="lambda", vram_gb=float("nan")) == "a100-40gb"
    assert normalize_gpu("A100", provider="lambda", vram_gb=0) == "a100-40gb"
    assert normalize_gpu("H100", provider="massedcompute", vram_gb=float("nan")) == "h100-pcie"
