"""The instance/SKU -> GPU table (scrapers/data/instance_types.csv): every row cited, every GPU a
catalog slug or ``unknown``, and OCI's price-list items found under the names lists really use."""

from __future__ import annotations

import pytest

from gpuprice.models.catalog import gpu_slugs
from gpuprice.scrapers.gpu_names import normalize_gpu
from gpuprice.scrapers.instance_types import instance_types, lookup, lookup_price_name, name_key


def test_every_row_is_cited_and_names_a_catalog_gpu() -> None:
    slugs = set(gpu_slugs())
    for row in instance_types():
        assert row.source_url.startswith("https://"), row
        assert row.gpu in slugs or row.gpu == "unknown", row


@pytest.mark.parametrize(
    ("provider", "instance_type", "gpu", "count"),
    [
        ("aws", "p6-b300.48xlarge", "b300", 8),
        ("aws", "p6-b200.48xlarge", "b200", 8),
        ("aws", "p6e-gb200.36xlarge", "gb200", 4),
        ("aws", "p5en.48xlarge", "h200-sxm", 8),
        ("aws", "g6.48xlarge", "l4", 8),
        ("azure", "Standard_ND128isr_NDR_GB200_v6", "gb200", 4),
        ("azure", "Standard_ND128isr_GB300_v6", "unknown", 4),  # GB300: not in the catalog
        ("azure", "Standard_ND96isr_H200_v5", "h200-sxm", 8),
        ("azure", "standard_nd96isr_mi300x_v5", "mi300x", 8),  # case-insensitive
    ],
)
def test_current_generations(provider: str, instance_type: str, gpu: str, count: int) -> None:
    row = lookup(provider, instance_type)
    assert row is not None and (row.gpu, row.gpu_count) == (gpu, count)


@pytest.mark.parametrize(
    ("name", "part", "shape"),
    [
        ("OCI - Compute - GPU - H100", "", "BM.GPU.H100.8"),
        ("Oracle Cloud Infrastructure - Compute - GPU - B300", "", "BM.GPU.B300.8"),
        ("OCI- Compute - GPU - MI355X", "", "BM.GPU.MI355X.8"),
        ("Compute  - GPU - A10", "", "BM.GPU.A10.4"),  # a doubled space
        ("OCI - Compute - GPU - RTX PRO 6000", "", "BM.GPU.RTXPRO.8"),
        ("a renamed item", "B110979", "BM.GPU.GB200.4"),  # the part number decides
        ("Compute - GPU - H100", "B999999", "BM.GPU.H100.8"),  # an unknown part: the name
    ],
)
def test_oci_items_by_part_number_or_name(name: str, part: str, shape: str) -> None:
    row = lookup_price_name("oci", name, part)
    assert row is not None and row.instance_type == shape


def test_generation_labels_and_variants_are_not_guessed() -> None:
    for name in ("OCI - Compute - GPU - H100T", "OCI - Compute - GPU - E4", "Compute - GPU Standard - V2"):
        assert lookup_price_name("oci", name) is None
    assert name_key("OCI - Compute - GPU - H100T") != name_key("Compute - GPU - H100")
    assert lookup("azure", "Standard_ND96is_NOPE_v5") is None  # a name the table does not list
    # The ND H100 v5 without InfiniBand: Microsoft's Azure ML VM SKU list states 8 GPUs of the ND H100
    # v5 family (MicrosoftDocs/azure-ai-docs, reference-managed-online-endpoints-vm-sku-list.md @43dc14ea).
    row = lookup("azure", "Standard_ND96is_H100_v5")
    assert row is not None and (row.gpu, row.gpu_count) == ("h100-sxm", 8)


def test_every_rows_gpu_is_what_the_name_reader_makes_of_its_card() -> None:
    """A row's slug is the GPU-name reader's reading of its ``gpu_raw`` and memory (the same rules
    as every page's names: a P100 16 GB without SXM2/NVLink is the PCIe card, K80/M60/MI25 are
    not in the catalog), so the table cannot disagree with how the name would be read elsewhere."""
    for row in instance_types():
        assert normalize_gpu(row.gpu_raw, vram_gb=row.vram_gb) == row.gpu, row


@pytest.mark.parametrize(
    ("size", "gpu", "count", "vram"),
    [
        # MicrosoftDocs/azure-docs articles/virtual-machines/sizes/gpu-accelerated/*.md, Accelerators tab
        ("Standard_NC6", "unknown", 1, 12.0),  # K80
        ("Standard_NC24rs_v2", "p100", 4, 16.0),
        ("Standard_NC12s_v3", "v100-16gb", 2, 16.0),
        ("Standard_NC64as_T4_v3", "t4", 4, 16.0),
        ("Standard_NCC40ads_H100_v5", "h100-nvl", 1, 94.0),
        ("Standard_ND24rs", "p40", 4, 24.0),
        ("Standard_ND40rs_v2", "v100", 8, 32.0),
        ("Standard_NV24", "unknown", 4, 8.0),  # M60: 32 GB per VM of 8 GiB GPUs
        ("Standard_NV48s_v3", "unknown", 4, 8.0),
        ("Standard_NV32as_v4", "unknown", 1, 16.0),  # MI25
        ("Standard_NV72ads_A10_v5", "a10", 2, 24.0),
    ],
)
def test_older_azure_sizes(size: str, gpu: str, count: int, vram: float) -> None:
    row = lookup("azure", size)
    assert row is not None and (row.gpu, row.gpu_count, row.vram_gb) == (gpu, count, vram)
    assert row.source_url.startswith(
        "https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/"
    )


def test_fractional_gpu_sizes_are_not_listed() -> None:
    """1/8 to 1/2 of a GPU has no whole GPU count: never a row (quarantined as unknown)."""
    for size in (
        "Standard_NV4as_v4",
        "Standard_NV16as_v4",
        "Standard_NV6ads_A10_v5",
        "Standard_NV18ads_A10_v5",
    ):
        assert lookup("azure", size) is None


def test_azure_other_names_of_a_size() -> None:
    asr = lookup("azure", "Standard_ND96asr_v4")
    ams = lookup("azure", "Standard_ND96amsr_A100_v4")
    assert asr is not None and asr.price_names == ("Standard_ND96asr_A100_v4", "ND96asrA100v4_NU")
    assert ams is not None and ams.price_names == ("ND96amsA100v4",)
    assert lookup("azure", "Standard_ND96isr_H100_v5").price_names == ()  # type: ignore[union-attr]
