"""The instance/SKU -> GPU table (scrapers/data/instance_types.csv): every row cited, every GPU a
catalog slug or ``unknown``, and OCI's price-list items found under the names lists really use."""

from __future__ import annotations

import pytest

from gpuprice.models.catalog import gpu_slugs
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
