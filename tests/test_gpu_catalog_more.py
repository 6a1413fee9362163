"""Catalog rows for the cards measured-run tables name beyond the rented ones (H20, L20, MI250X,
MI250, MI210, GeForce RTX 3060/3080/3080 Ti/3090 Ti/4080/4080 SUPER/4070 Ti SUPER/4060 Ti 16GB,
RTX 2080 Ti, TITAN RTX, Tesla P100/P40, A2): each resolves from its slug and from its nvidia-smi /
marketing names, holds the cited memory and dense peak, lands in the throughput family its
architecture implies, and `fit` / `estimate` (also through --batch) accept it. The names the catalog
already mapped keep their slugs.

Left out: GB300 (a row would turn Azure/OCI/Nebius/CoreWeave fixtures' "unknown" GB300 offers
into priced ones: a parser-level change outside this set), the H100 SXM 94 GB part (no citable
datasheet here), the 141 GB H20 edition, the P100 SXM2 card and the 8 GB RTX 3060 / 4060 Ti.
"""

from __future__ import annotations

import json

import pytest

from gpuprice.models.catalog import get_gpu, resolve_gpu
from gpuprice.models.gpu_hardware import fp32_share, gpu_profile
from gpuprice.scrapers.gpu_names import UNKNOWN, normalize_gpu

MIB = 2**20 / 1e9
GIB = 2**30 / 1e9

# slug -> (names that must map to it, usable memory GB, dense BF16 (FP16 where no BF16) TFLOPS,
#          throughput family, bf16_native). Memory: nvidia-smi memory.total where public logs
# quote it, else the sold GiB; peaks as each row's peak_source states them.
NEW: dict[str, tuple[list[str], float, float, str, bool]] = {
    "h20": (["NVIDIA H20", "H20", "HGX H20", "NVIDIA HGX H20", "H20 96GB"], 97871 * MIB, 148, "hopper", True),
    "l20": (["NVIDIA L20", "L20", "L20 48GB"], 46068 * MIB, 119.5, "ada_workstation", True),
    "mi250x": (["AMD Instinct MI250X", "MI250X", "Instinct MI250X"], 64 * GIB, 191.5, "cdna", True),
    "mi250": (["AMD Instinct MI250", "MI250"], 64 * GIB, 181, "cdna", True),
    "mi210": (["AMD Instinct MI210", "MI210"], 64 * GIB, 181, "cdna", True),
    "rtx-3060": (
        ["NVIDIA GeForce RTX 3060", "GeForce RTX 3060", "RTX 3060 12GB", "rtx3060"],
        12288 * MIB,
        25.5,
        "geforce",
        True,
    ),
    "rtx-3080": (["NVIDIA GeForce RTX 3080", "RTX 3080 10GB", "RTX 3080"], 10 * GIB, 59.5, "geforce", True),
    "rtx-3080-12gb": (["RTX 3080 12GB", "NVIDIA GeForce RTX 3080 12GB"], 12 * GIB, 61.3, "geforce", True),
    "rtx-3080-ti": (
        ["NVIDIA GeForce RTX 3080 Ti", "RTX 3080 Ti", "RTX 3080Ti"],
        12 * GIB,
        68.2,
        "geforce",
        True,
    ),
    "rtx-3090-ti": (["NVIDIA GeForce RTX 3090 Ti", "RTX 3090 Ti", "3090Ti"], 24 * GIB, 80, "geforce", True),
    "rtx-4080": (
        ["NVIDIA GeForce RTX 4080", "RTX 4080", "GeForce RTX 4080 16GB", "4080"],
        16376 * MIB,
        97.5,
        "geforce",
        True,
    ),
    "rtx-4080-super": (
        ["NVIDIA GeForce RTX 4080 SUPER", "RTX 4080 Super", "RTX4080SUPER"],
        16 * GIB,
        104.4,
        "geforce",
        True,
    ),
    "rtx-4070-ti-super": (
        ["NVIDIA GeForce RTX 4070 Ti SUPER", "RTX 4070 Ti Super", "RTX4070TiSuper"],
        16 * GIB,
        88.2,
        "geforce",
        True,
    ),
    "rtx-4060-ti-16gb": (
        ["RTX 4060 Ti 16GB", "NVIDIA GeForce RTX 4060 Ti 16GB"],
        16 * GIB,
        44.1,
        "geforce",
        True,
    ),
    "rtx-2080-ti": (
        ["NVIDIA GeForce RTX 2080 Ti", "RTX 2080 Ti", "2080Ti", "GeForce RTX 2080Ti 11GB"],
        11264 * MIB,
        53.8,
        "turing",
        False,
    ),
    "titan-rtx": (["NVIDIA TITAN RTX", "TITAN RTX", "Titan RTX 24GB"], 24 * GIB, 130.5, "turing", False),
    "p100": (
        ["Tesla P100-PCIE-16GB", "NVIDIA Tesla P100", "P100", "Tesla P100 PCIe 16GB"],
        16280 * MIB,
        18.7,
        "volta",
        False,
    ),
    "p40": (["Tesla P40", "NVIDIA Tesla P40", "P40 24GB"], 24576 * MIB, 11.76, "volta", False),
    "a2": (
        ["NVIDIA A2", "A2", "A2 16GB", "NVIDIA A2 Tensor Core GPU"],
        15356 * MIB,
        18,
        "ampere_workstation",
        True,
    ),
}


@pytest.mark.parametrize("slug", sorted(NEW))
def test_new_slug_resolves_from_its_slug_and_names(slug: str) -> None:
    names = NEW[slug][0]
    assert resolve_gpu(slug).slug == slug
    assert resolve_gpu(slug.upper()).slug == slug
    for name in names:
        assert normalize_gpu(name) == slug, name


@pytest.mark.parametrize("slug", sorted(set(NEW) - {"rtx-3080", "rtx-3080-12gb"}))
def test_new_slug_resolves_for_a_memory_fit_from_its_names(slug: str) -> None:
    # resolve_gpu asks every catalogued memory size; the RTX 3080 (10 or 12 GB under one
    # nvidia-smi name) is ambiguous like "A100", and tested below.
    for name in NEW[slug][0]:
        assert resolve_gpu(name).slug == slug, name


def test_rtx_3080_needs_its_memory_for_a_memory_fit() -> None:
    from gpuprice.errors import BadInput

    assert resolve_gpu("RTX 3080 10GB").slug == "rtx-3080"
    assert resolve_gpu("RTX 3080 12GB").slug == "rtx-3080-12gb"
    with pytest.raises(BadInput, match="ambiguous"):
        resolve_gpu("NVIDIA GeForce RTX 3080")
    assert normalize_gpu("NVIDIA GeForce RTX 3080") == "rtx-3080"  # prices: the common 10 GB card
    assert normalize_gpu("NVIDIA GeForce RTX 3080", vram_gb=12) == "rtx-3080-12gb"


@pytest.mark.parametrize("slug", sorted(NEW))
def test_new_slug_memory_peak_and_family_are_as_cited(slug: str) -> None:
    _, usable, peak, family, bf16 = NEW[slug]
    spec = get_gpu(slug)
    assert spec.usable_memory_gb == pytest.approx(usable, abs=0.001)
    assert spec.dense_bf16_tflops == pytest.approx(peak, rel=0.002)
    assert spec.bf16_native is bf16
    assert gpu_profile(slug).family == family
    assert spec.peak_source.strip() and spec.source_url.startswith("https://")


def test_geforce_rows_follow_the_half_rate_fp32_accumulate_convention() -> None:
    # SMs x 512 FLOP/clk x boost: half the FP16-accumulate headline, as rtx-4090 (128 x 2.52 GHz).
    for slug, sms, ghz in [
        ("rtx-4090", 128, 2.52),
        ("rtx-3090", 82, 1.695),
        ("rtx-3060", 28, 1.777),
        ("rtx-3080", 68, 1.71),
        ("rtx-3080-12gb", 70, 1.71),
        ("rtx-3080-ti", 80, 1.665),
        ("rtx-3090-ti", 84, 1.86),
        ("rtx-4080", 76, 2.505),
        ("rtx-4080-super", 80, 2.55),
        ("rtx-4070-ti-super", 66, 2.61),
        ("rtx-4060-ti-16gb", 34, 2.535),
        ("rtx-2080-ti", 68, 1.545),
    ]:
        spec = get_gpu(slug)
        assert spec.dense_bf16_tflops == pytest.approx(sms * 512 * ghz / 1000, rel=0.01), slug
        assert spec.form_factor == "consumer" and spec.ecc is False, slug
        if slug not in ("rtx-4090", "rtx-3090"):  # existing rows say it in peak_source / notes
            assert "half rate" in spec.notes, slug
    # TITAN RTX runs FP32 accumulate at full rate (72 SMs x 1024 x 1.77 GHz).
    assert get_gpu("titan-rtx").dense_bf16_tflops == pytest.approx(72 * 1024 * 1.77 / 1000, rel=0.01)


def test_cards_without_bf16_are_handled_as_t4_and_v100() -> None:
    for slug in ("t4", "v100", "rtx-2080-ti", "titan-rtx", "p100", "p40"):
        spec = get_gpu(slug)
        assert spec.bf16_native is False, slug
        assert spec.dense_fp8_tflops is None, slug
        assert "NO BF16" in spec.notes, slug
        assert gpu_profile(slug).family in ("volta", "turing"), slug


def test_mi250s_are_per_gcd_and_h20_keeps_its_benchmark_profile() -> None:
    # The throughput model's benchmark-only H20 (148 TFLOPS, 4.0 TB/s, NVLink 900) is the catalog
    # row now; MI250X moved from per OAM (383) to per GCD, the device ROCm lists.
    h20 = gpu_profile("h20")
    assert (h20.peak_tflops, h20.memory_bandwidth_tbps, h20.nvlink_gbps, h20.has_fp8) == (
        148.0,
        4.0,
        900.0,
        True,
    )
    assert get_gpu("mi250x").dense_bf16_tflops * 2 == pytest.approx(383, rel=0.001)
    assert get_gpu("mi250").dense_bf16_tflops * 2 == pytest.approx(362.1, rel=0.001)
    assert get_gpu("mi250x").memory_gb == 64 and "PER GCD" in get_gpu("mi250x").notes


def test_fp32_share_of_the_new_families() -> None:
    # GeForce consumer cards read the consumer share; Pascal and the Turing consumer cards their
    # family's or the consumer share as the model defines them (not changed here).
    assert fp32_share(gpu_profile("rtx-4080")) == 0.5
    assert fp32_share(gpu_profile("a2")) == 0.25
    assert fp32_share(gpu_profile("p100")) == 0.125


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # look-alikes of the new names keep their slugs
        ("H200", "h200-sxm"),
        ("NVIDIA H200", "h200-sxm"),
        ("NVIDIA HGX H200", "h200-sxm"),
        ("H200 NVL", "h200-nvl"),
        ("GH200", "gh200"),
        ("H100 SXM", "h100-sxm"),
        ("H800", "h800"),
        ("L40", "l40"),
        ("L40S", "l40s"),
        ("NVIDIA L4", "l4"),
        ("L4", "l4"),
        ("RTX 4090", "rtx-4090"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("1x 4090 24GB", "rtx-4090"),
        ("RTX 4090 48GB", "rtx-4090"),  # the 4090 rule never looked at memory: unchanged
        ("GeForce RTX 5090", "rtx-5090"),
        ("NVIDIA GeForce RTX 3090", "rtx-3090"),
        ("RTX 3090", "rtx-3090"),
        ("A10", "a10"),
        ("A10G", "a10g"),
        ("A100 80GB", "a100-80gb-sxm"),
        ("A30", "a30"),
        ("A40", "a40"),
        ("RTX A2000", UNKNOWN),
        ("RTX 2000 Ada", "rtx-2000-ada"),
        ("RTX 4000 Ada", "rtx-4000-ada"),
        ("RTX A4000", "a4000"),
        ("Tesla T4", "t4"),
        ("Tesla V100-SXM2-32GB", "v100"),
        ("Tesla V100-PCIE-16GB", "v100-16gb"),
        ("MI300X", "mi300x"),
        ("MI300A", UNKNOWN),
        ("AMD Instinct MI325X", "mi325x"),
        ("B300", "b300"),
        ("GB300 NVL72", UNKNOWN),
        ("RTX 4090 D", UNKNOWN),
        ("Quantum Widget 4080", UNKNOWN),  # a bare number only counts with nothing else around it
        ("Tesla P4", UNKNOWN),
    ],
)
def test_existing_and_lookalike_names_keep_their_slugs(raw: str, expected: str) -> None:
    assert normalize_gpu(raw) == expected


@pytest.mark.parametrize(
    ("raw", "vram_gb"),
    [
        ("RTX 3060", 8),  # the cut-down 8 GB card
        ("RTX 4060 Ti", None),  # 8 or 16 GB under one name
        ("RTX 4060 Ti 8GB", None),
        ("RTX 4070 Ti", None),
        ("RTX 4080 Laptop GPU", None),
        ("RTX 2080 Ti 22GB", None),  # modded board
        ("H20 141GB", None),
        ("Tesla P100-SXM2-16GB", None),
        ("Tesla P100-PCIE-12GB", None),
        ("a2-highgpu-1g", None),  # Google Cloud machine type (A100s)
        ("RTX 2080 Super", None),
    ],
)
def test_other_editions_stay_unknown(raw: str, vram_gb: float | None) -> None:
    assert normalize_gpu(raw, vram_gb=vram_gb) == UNKNOWN


@pytest.mark.parametrize("gpu", ["h20", "l20", "mi250x", "rtx-3060", "rtx-4080", "rtx-2080-ti", "p40", "a2"])
def test_fit_and_estimate_accept_the_new_gpus(cli, home, gpu: str) -> None:
    model = ("--model", "meta-llama/Llama-3.1-8B", "--method", "qlora", "--gpu", gpu)
    fit = cli("fit", *model, "--json")
    assert fit.code == 0, fit.err
    assert json.loads(fit.out)["gpu"] == gpu
    estimate = cli("estimate", *model, "--tokens", "1B", "--json")
    assert estimate.code == 0, estimate.err
    result = json.loads(estimate.out)
    assert result["gpu"] == gpu and result["tokens_per_sec_per_gpu"] > 0


def test_fit_accepts_marketing_names_and_batch_gpu_column(cli, home, tmp_path) -> None:
    named = cli(
        "fit",
        "--model",
        "meta-llama/Llama-3.1-8B",
        "--method",
        "qlora",
        "--gpu",
        "NVIDIA GeForce RTX 4080",
        "--json",
    )
    assert named.code == 0, named.err
    assert json.loads(named.out)["gpu"] == "rtx-4080"
    rows = tmp_path / "runs.csv"
    rows.write_text(
        "model,method,gpu\n"
        "meta-llama/Llama-3.1-8B,qlora,NVIDIA H20\n"
        "meta-llama/Llama-3.1-8B,qlora,AMD Instinct MI250X\n"
        "meta-llama/Llama-3.1-8B,qlora,Tesla P100-PCIE-16GB\n"
        "meta-llama/Llama-3.1-8B,qlora,NVIDIA GeForce RTX 2080 Ti\n",
        encoding="utf-8",
    )
    batch = cli("fit", "--batch", str(rows))
    assert batch.code == 0, batch.err
    assert [json.loads(line)["gpu"] for line in batch.out.splitlines()] == [
        "h20",
        "mi250x",
        "p100",
        "rtx-2080-ti",
    ]
    estimates = cli("estimate", "--batch", str(rows), "--tokens", "1B")
    assert estimates.code == 0, estimates.err
    assert len(estimates.out.splitlines()) == 4
