"""Azure parser: Retail Prices API pages (combined and single), fixtures and the sample archive."""

from __future__ import annotations

import json

import pytest

from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.providers import azure
from parser_support import (
    archive_dir,
    archive_page_names,
    assert_archive_sources_copied,
    assert_offers,
    assert_registered,
    fixture_dir,
    full_offer,
    parse_archive_page,
    report_of,
)

FIXTURES = fixture_dir("azure")
H100 = dict(
    gpu="h100-sxm", gpu_raw="NVIDIA H100 80GB", gpu_count=8, vram_gb=80.0, sku="Standard_ND96isr_H100_v5"
)


def offer(**fields: object) -> dict:
    return full_offer("azure", **fields)


def test_meters_become_on_demand_spot_and_reservations_per_region() -> None:
    result = azure.parse((FIXTURES / "api_pages.json").read_bytes())
    assert_offers(
        result,
        [
            offer(**H100, usd_per_gpu_hour=12.29, usd_per_instance_hour=98.32, region="eastus"),
            offer(
                **H100, tier="spot", usd_per_gpu_hour=2.2712, usd_per_instance_hour=18.1695, region="eastus"
            ),
            # a reservation's retailPrice is the whole term: 569,400 / 8,760 h = 65.00 per VM-hour
            offer(
                **H100,
                tier="reserved",
                commitment_months=12,
                usd_per_gpu_hour=8.125,
                usd_per_instance_hour=65.0,
                region="eastus",
            ),
            offer(
                **H100,
                tier="reserved",
                commitment_months=36,
                usd_per_gpu_hour=5.625,
                usd_per_instance_hour=45.0,
                region="eastus",
            ),
            offer(
                gpu="a100-80gb-sxm",
                gpu_raw="NVIDIA A100 80GB",
                gpu_count=8,
                vram_gb=80.0,
                usd_per_gpu_hour=4.0963,
                usd_per_instance_hour=32.77,
                region="westus2",
                sku="Standard_ND96amsr_A100_v4",
            ),
            offer(
                gpu="h100-nvl",
                gpu_raw="NVIDIA H100 NVL 94GB",
                gpu_count=1,
                vram_gb=94.0,
                usd_per_gpu_hour=6.98,
                usd_per_instance_hour=6.98,
                region="eastus",
                sku="Standard_NC40ads_H100_v5",
            ),
            # Standard_ND128isr_Q100_v9, not in the mapping CSV: quarantined (see the report)
        ],
    )
    assert report_of(result, "azure") == {
        "rows_seen": 13,
        "offers": 6,
        "unpriced_rows": 1,  # westeurope at $0
        "rejected": [
            {
                "raw": "Standard_ND96isr_H100_v5 | swedencentral | ND96isr H100 v5 | Consumption | 95.0",
                "reason": "currency EUR, not USD",
            },
            # no known GPU count: the VM's $150/h is never stored as one GPU's price
            {
                "raw": "Standard_ND128isr_Q100_v9 | eastus | ND128isr Q100 v9 | Consumption | 150.0",
                "reason": "Standard_ND128isr_Q100_v9 is not in the instance-to-GPU table "
                "(scrapers/data/instance_types.csv): GPU count unknown, $150.0 per VM-hour not priced per GPU",
            },
            {
                "raw": "Standard_NC24ads_A100_v4 | eastus | NC24ads A100 v4 | Consumption | 3.673",
                "reason": "unit '1/Month', not '1 Hour'",
            },
        ],
        "unknown_gpus": ["Standard_ND128isr_Q100_v9"],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [],
    }


def test_a_single_api_page_parses_like_a_combined_one() -> None:
    result = azure.parse((FIXTURES / "single_page.json").read_bytes())
    assert_offers(
        result, [offer(**H100, usd_per_gpu_hour=12.29, usd_per_instance_hour=98.32, region="eastus")]
    )


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b'{"value": []}', "no Items list in the Retail Prices API response"),
        (
            b'{"format": "gpuprice-combined/1", "pages": []}',
            "no Items list in the Retail Prices API response",
        ),
        (
            b"{not json",
            "invalid JSON (malformed JSON at line 1 column 2: Expecting property name enclosed in double quotes)",
        ),
    ],
)
def test_a_response_without_items_is_refused(body: bytes, what: str) -> None:
    with pytest.raises(StructureMissing) as info:
        azure.parse(body)
    assert (info.value.provider, info.value.what) == ("azure", what)


def test_live_request_filters_the_mapped_gpu_sizes_and_pages_by_next_link() -> None:
    (request,) = azure.live_requests()
    assert request.combine and request.kind == "json" and request.method == "GET"
    assert request.url.startswith("https://prices.azure.com/api/retail/prices?api-version=")
    assert "serviceName%20eq%20'Virtual%20Machines'" in request.url
    assert "armSkuName%20eq%20'Standard_ND96isr_H100_v5'%20or%20" in request.url
    assert "armSkuName%20eq%20'Standard_ND96isr_MI300X_v5'" in request.url
    following = azure.next_page_request(
        request, {"NextPageLink": "https://prices.azure.com/api/retail/prices?$skip=1000"}
    )
    assert following is not None and following.url.endswith("$skip=1000") and following.combine
    assert azure.next_page_request(request, {"NextPageLink": None}) is None
    assert azure.MAX_PAGES == 40  # 45 sizes since azure/5 (was 20)


def test_sample_archive_pages_parse_with_region_and_cite_their_prices() -> None:
    names = archive_page_names("azure", (".json",))
    assert names == ["2026-09-16.json"]
    result = parse_archive_page(azure, names[0], dated=True)
    assert [(o.region, o.tier, o.usd_per_gpu_hour) for o in result.offers] == [
        ("eastus", "on_demand", 12.29),
        ("eastus", "spot", 2.2712),
    ]
    assert_archive_sources_copied("azure", names)
    assert json.loads((archive_dir("azure") / names[0]).read_text())["format"] == "gpuprice-combined/1"


def test_registered() -> None:
    assert_registered(
        azure, "azure", "azure/5", "https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/"
    )
