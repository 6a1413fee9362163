"""The GPU spec catalog: contract slugs, sourced dense values, typed frame, and the price band."""

from __future__ import annotations

import csv
import re

import pandas as pd
import pytest

from conftest import OBSERVED_PRICES, TEST_DATA
from gpuprice.errors import BadInput
from gpuprice.models import catalog
from gpuprice.models.catalog import (
    CATALOG_VERSION,
    GpuSpec,
    get_gpu,
    gpu_slugs,
    load_gpu_catalog,
    plausible_price_band,
)
from gpuprice.scrapers.gpu_names import UNKNOWN, normalize_gpu

CONTRACT = TEST_DATA / "CONTRACT.md"
PEAK_FLOPS = TEST_DATA / "gpu_peak_flops.csv"


def _contract_slugs() -> list[str]:
    text = CONTRACT.read_text()
    section = text.split("## GPU slugs", 1)[1].split("\n## ", 1)[0]
    slugs = re.findall(r"`([a-z0-9-]+)`", section)
    return [s for s in slugs if s != UNKNOWN]


def test_every_contract_slug_is_in_the_catalog() -> None:
    slugs = _contract_slugs()
    assert len(slugs) == 25  # the contract's list, read from the file
    assert set(slugs) <= set(gpu_slugs())


def test_catalog_version_comes_from_the_csv_header() -> None:
    first_line = catalog.CATALOG_PATH.read_text().splitlines()[0]
    assert first_line == f"# catalog_version: {CATALOG_VERSION}"
    assert CATALOG_VERSION


def test_rows_are_sourced_and_physical() -> None:
    frame = load_gpu_catalog()
    assert frame["slug"].is_unique
    for row in frame.itertuples():
        assert row.source_url.startswith("https://"), row.slug
        assert row.peak_source.strip(), row.slug
        assert row.memory_gb > 0, row.slug
        assert row.memory_bandwidth_tbps > 0, row.slug
        assert row.dense_bf16_tflops > 0, row.slug
        assert row.tdp_w > 0, row.slug
        assert row.form_factor in {"sxm", "pcie", "nvl", "superchip", "consumer"}, row.slug
        if not pd.isna(row.dense_fp8_tflops):
            # FP8 tensor throughput is twice BF16 on every part that has it.
            assert row.dense_fp8_tflops == pytest.approx(2 * row.dense_bf16_tflops, rel=0.02), row.slug
        if row.confidence == "low":
            assert row.notes or "memory" in row.peak_source, f"{row.slug}: low confidence must say why"


def _peak_flops_rows() -> dict[str, dict[str, str]]:
    with PEAK_FLOPS.open(newline="") as fh:
        return {row["gpu"]: row for row in csv.DictReader(fh)}


# catalog slug -> the row of /work/shared/data/gpu_peak_flops.csv (dense values) it must match.
PEAK_ROWS = {
    "a100-40gb": "A100 SXM/PCIe 40/80GB",
    "a100-80gb-pcie": "A100 SXM/PCIe 40/80GB",
    "a100-80gb-sxm": "A100 SXM/PCIe 40/80GB",
    "a800": "A100 SXM/PCIe 40/80GB",
    "h800": "H100 SXM 80GB",
    "h100-sxm": "H100 SXM 80GB",
    "h100-pcie": "H100 PCIe 80GB",
    "h100-nvl": "H100 NVL 94GB",
    "h200-sxm": "H200 SXM 141GB",
    "b200": "B200 (HGX) 180-192GB",
    "gb200": "GB200 (per GPU)",
    "l40s": "L40S 48GB",
    "l4": "L4 24GB",
    "a10": "A10 24GB",
    "a10g": "A10G 24GB (AWS g5)",
    "a6000": "RTX A6000 48GB",
    "rtx-6000-ada": "RTX 6000 Ada 48GB",
    "rtx-4090": "RTX 4090 24GB",
    "rtx-3090": "RTX 3090 24GB",
    "a40": "A40 48GB",
    "v100": "V100 SXM2 32GB",
    "t4": "T4 16GB",
    "mi300x": "MI300X 192GB",
    "mi325x": "MI325X 256GB",
    "mi355x": "MI355X 288GB",
}


def _first_number(text: str) -> float | None:
    match = re.search(r"\d+(?:\.\d+)?", text)
    return float(match.group(0)) if match else None


@pytest.mark.parametrize(("slug", "peak_row"), sorted(PEAK_ROWS.items()))
def test_dense_values_match_the_compiled_peak_flops(slug: str, peak_row: str) -> None:
    source = _peak_flops_rows()[peak_row]
    spec = get_gpu(slug)
    assert spec.dense_bf16_tflops == pytest.approx(_first_number(source["peak_dense_bf16_tflops"]), rel=0.01)
    fp8 = _first_number(source["peak_dense_fp8_tflops"])
    if fp8 is None:
        assert spec.dense_fp8_tflops is None
    else:
        assert spec.dense_fp8_tflops == pytest.approx(fp8, rel=0.01)


@pytest.mark.parametrize(
    ("slug", "dense_bf16", "sparse_headline"),
    [
        ("h100-sxm", 989, 1979),
        ("h200-sxm", 989, 1979),
        ("b200", 2250, 4500),
        ("a100-80gb-sxm", 312, 624),
        ("l40s", 362, 733),
    ],
)
def test_dense_not_sparse(slug: str, dense_bf16: float, sparse_headline: float) -> None:
    value = get_gpu(slug).dense_bf16_tflops
    assert value == pytest.approx(dense_bf16, rel=0.01)
    assert value < sparse_headline


@pytest.mark.parametrize(
    ("slug", "memory_gb"),
    [
        ("h200-nvl", 141),
        ("h200-sxm", 141),
        ("b200", 180),
        ("b300", 288),
        ("gb200", 186),
        ("gh200", 96),
        ("h100-nvl", 94),
        ("h100-sxm", 80),
        ("rtx-pro-6000", 96),
        ("rtx-5090", 32),
        ("a100-40gb", 40),
        ("a100-80gb-pcie", 80),
        ("mi300x", 192),
        ("rtx-6000-ada", 48),
        ("l4", 24),
        ("v100", 32),
    ],
)
def test_memory_per_gpu(slug: str, memory_gb: float) -> None:
    assert get_gpu(slug).memory_gb == memory_gb


def test_ecc_nvlink_and_bf16_facts() -> None:
    for slug in ("rtx-4090", "rtx-5090", "rtx-3090"):
        spec = get_gpu(slug)
        assert spec.form_factor == "consumer" and spec.ecc is False, slug
    for slug in ("a6000", "rtx-6000-ada", "rtx-pro-6000", "h100-sxm", "l40s", "mi300x"):
        assert get_gpu(slug).ecc is True, slug
    assert get_gpu("h100-sxm").nvlink_gbps == 900
    assert get_gpu("a100-80gb-sxm").nvlink_gbps == 600
    assert get_gpu("h100-nvl").nvlink_gbps == 600
    assert get_gpu("b200").nvlink_gbps == 1800
    assert get_gpu("l40s").nvlink_gbps is None
    assert get_gpu("h100-pcie").nvlink_gbps is None
    assert get_gpu("v100").bf16_native is False  # FP16 value stands in for BF16
    assert get_gpu("gb200").form_factor == "superchip"
    assert get_gpu("gh200").form_factor == "superchip"
    assert get_gpu("h100-nvl").form_factor == "nvl"


def test_frame_is_typed_and_a_safe_copy() -> None:
    frame = load_gpu_catalog()
    assert list(frame["slug"]) == gpu_slugs()
    assert frame["memory_gb"].dtype == "float64"
    assert frame["ecc"].dtype == "bool"
    assert frame["release_year"].dtype == "int64"
    assert str(frame["dense_fp8_tflops"].dtype) == "Float64"
    assert frame.loc[frame["slug"] == "a100-40gb", "dense_fp8_tflops"].isna().all()
    # The warehouse's dim_gpu columns are all present.
    dim_gpu = {
        "slug",
        "vendor",
        "architecture",
        "memory_gb",
        "memory_bandwidth_tbps",
        "dense_bf16_tflops",
        "dense_fp8_tflops",
        "form_factor",
        "nvlink_gbps",
        "ecc",
        "tdp_w",
        "release_year",
        "source_url",
    }
    assert dim_gpu <= set(frame.columns)
    frame.loc[:, "memory_gb"] = 1.0
    assert load_gpu_catalog()["memory_gb"].min() > 1.0


def test_frame_and_specs_agree() -> None:
    for row in load_gpu_catalog().to_dict(orient="records"):
        spec = get_gpu(row["slug"])
        assert isinstance(spec, GpuSpec)
        assert spec.memory_gb == row["memory_gb"]
        assert spec.dense_bf16_tflops == row["dense_bf16_tflops"]


def test_unknown_slug_is_bad_input_naming_choices() -> None:
    with pytest.raises(BadInput) as info:
        get_gpu("h100")
    message = str(info.value)
    assert "'h100'" in message and "h100-sxm" in message
    assert "\n" not in message
    assert info.value.exit_code == 2
    with pytest.raises(BadInput):
        get_gpu("unknown")


def test_bad_catalog_rows_are_rejected() -> None:
    good = {k: str(v) for k, v in get_gpu("h100-sxm").model_dump(mode="json").items()}
    catalog._spec_from_row(good)
    for field, bad in [
        ("memory_gb", "0"),
        ("form_factor", "oam"),
        ("source_url", "not a url"),
        ("vendor", ""),
    ]:
        with pytest.raises(ValueError, match="h100-sxm"):
            catalog._spec_from_row(good | {field: bad})


def test_missing_version_header_is_an_error() -> None:
    with pytest.raises(ValueError, match="catalog_version"):
        catalog._split_header("slug,name\nh100-sxm,H100\n")
    version, body = catalog._split_header("# catalog_version: 7\n# note\nslug\nx\n")
    assert version == "7" and body == "slug\nx\n"


def _observed_prices() -> list[tuple[str, str, float]]:
    with OBSERVED_PRICES.open(newline="") as fh:
        return [(row["provider"], row["gpu"], float(row["usd_per_gpu_hour"])) for row in csv.DictReader(fh)]


def test_price_band_accepts_every_observed_price() -> None:
    checked = 0
    for provider, raw, price in _observed_prices():
        slug = normalize_gpu(raw, provider=provider)
        if slug == UNKNOWN:
            continue
        low, high = plausible_price_band(slug)
        assert low <= price <= high, (provider, raw, slug, price, (low, high))
        checked += 1
    assert checked >= 200


@pytest.mark.parametrize(
    ("slug", "price"),
    [
        # seed-guide.md section 3, whole-config prices of 2026-10-29 divided by GPU count.
        ("l40s", 0.82),
        ("a100-80gb-sxm", 0.92),
        ("h100-sxm", 2.32),
        ("h200-sxm", 3.07),
        ("b200", 4.61),
        ("a100-80gb-sxm", 3.68 / 4),
        ("h100-sxm", 18.56 / 8),
        # Hyperscaler list prices (AWS p3.2xlarge V100 16GB, p5 H100 before the 2025 cut).
        ("v100-16gb", 3.06),
        ("h100-sxm", 98.32 / 8),
    ],
)
def test_price_band_accepts_other_real_prices(slug: str, price: float) -> None:
    low, high = plausible_price_band(slug)
    assert low <= price <= high


@pytest.mark.parametrize("slug", gpu_slugs())
def test_price_band_rejects_absurd_prices(slug: str) -> None:
    low, high = plausible_price_band(slug)
    assert 0 < low < high
    assert not low <= 0.001 <= high
    assert not low <= 500 <= high


@pytest.mark.parametrize(
    ("slug", "price", "mistake"),
    [
        ("h100-sxm", 0.001, "fraction of a cent"),
        ("h100-sxm", 500.0, "absurd"),
        ("h100-sxm", 49.24, "CoreWeave 8x HGX H100 instance price read as per-GPU"),
        ("h100-sxm", 299.0, "cents read as dollars"),
        ("b200", 68.80, "CoreWeave 8x HGX B200 instance price read as per-GPU"),
        ("a100-80gb-sxm", 21.6, "8x A100 instance price read as per-GPU"),
        ("l40s", 18.0, "8x L40S instance price read as per-GPU"),
    ],
)
def test_price_band_catches_parser_mistakes(slug: str, price: float, mistake: str) -> None:
    low, high = plausible_price_band(slug)
    assert not low <= price <= high, mistake


def test_price_band_unknown_slug_is_bad_input() -> None:
    with pytest.raises(BadInput):
        plausible_price_band("tpu-v5e")
