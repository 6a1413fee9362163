"""Plausible drift in the JSON APIs of azure, aws, oci and vastai: missing and extra fields,
renamed families, paging. Each case asserts the offers (every field) and what the report says."""

from __future__ import annotations

import json

import pytest

from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.registry import parse_page
from parser_support import assert_offers, full_offer


def _azure(**fields: object) -> dict:
    item = {
        "armSkuName": "Standard_ND96isr_H100_v5",
        "armRegionName": "eastus",
        "meterName": "ND96isr H100 v5",
        "productName": "Virtual Machines NDsr H100 v5 Series",
        "type": "Consumption",
        "unitOfMeasure": "1 Hour",
        "currencyCode": "USD",
        "retailPrice": 98.32,
    }
    return {**item, **fields}


def _page(provider: str, body: object) -> bytes:
    return json.dumps(body).encode()


H100_AZ = dict(gpu="h100-sxm", gpu_raw="NVIDIA H100 80GB", gpu_count=8, vram_gb=80.0, region="eastus")


def test_azure_extra_fields_and_savings_plans_with_their_term() -> None:
    item = _azure(
        tierMinimumUnits=0.0,  # an extra field: ignored
        savingsPlan=[
            {"unitPrice": 70.0, "retailPrice": 70.0, "term": "1 Year"},
            {"unitPrice": 50.0, "retailPrice": 50.0, "term": "3 Years"},
            {"retailPrice": 60.0, "term": "5 Weeks"},
        ],
    )
    result = parse_page("azure", _page("azure", {"Items": [item]}))
    plan = dict(H100_AZ, sku="Standard_ND96isr_H100_v5 (savings plan)", tier="reserved")
    assert_offers(
        result,
        [
            full_offer(
                "azure",
                **H100_AZ,
                sku="Standard_ND96isr_H100_v5",
                usd_per_gpu_hour=12.29,
                usd_per_instance_hour=98.32,
            ),
            full_offer(
                "azure", **plan, commitment_months=12, usd_per_gpu_hour=8.75, usd_per_instance_hour=70.0
            ),
            full_offer(
                "azure", **plan, commitment_months=36, usd_per_gpu_hour=6.25, usd_per_instance_hour=50.0
            ),
        ],
    )
    assert [r.reason for r in result.report.rejected] == ["savings plan without a '1 Year'/'3 Years' term"]


def test_azure_missing_price_is_unpriced_and_a_renamed_size_is_quarantined() -> None:
    items = [_azure(retailPrice=None), _azure(armSkuName="Standard_ND96isr_H100_v6")]
    result = parse_page("azure", _page("azure", {"Items": items}))
    # a size the table does not list has no known GPU count: no offer, never "unknown x1"
    assert result.offers == []
    assert (result.report.unpriced_rows, result.report.unknown_gpus) == (1, ["Standard_ND96isr_H100_v6"])
    (rejected,) = result.report.rejected
    assert rejected.raw.startswith("Standard_ND96isr_H100_v6 | eastus |")
    assert "GPU count unknown, $98.32 per VM-hour not priced per GPU" in rejected.reason


def test_azure_a_page_that_failed_mid_paging_keeps_the_pages_that_arrived() -> None:
    document = {
        "format": "gpuprice-combined/1",
        "pages": [
            {
                "url": "https://prices.azure.com/p1",
                "status": 200,
                "body": {"Items": [_azure()], "NextPageLink": "x"},
            },
            {"url": "https://prices.azure.com/p2", "error": "HTTP 500 after 4 attempts"},
        ],
    }
    result = parse_page("azure", _page("azure", document))
    assert len(result.offers) == 1
    assert result.report.notes == ["part missing: https://prices.azure.com/p2: HTTP 500 after 4 attempts"]


def test_aws_rows_without_the_instance_type_field_are_reported_as_a_missing_column() -> None:
    body = {
        "regions": {
            "US East (N. Virginia)": {
                "a": {"InstanceType": "p5.48xlarge", "price": "55.04"},
                "b": {"Instance Type": "p5.48xlarge", "price": "55.04", "Extra": "ignored"},
            }
        }
    }
    result = parse_page("aws", _page("aws", body))
    assert [(o.sku, o.region, o.usd_per_instance_hour) for o in result.offers] == [
        ("p5.48xlarge", "us-east-1", 55.04)
    ]
    assert result.report.missing_columns == ["Instance Type"]
    assert result.report.unexpected_columns == ["InstanceType", "price"]


def test_aws_a_renamed_family_is_quarantined_and_a_new_region_keeps_its_name() -> None:
    body = {
        "regions": {
            "Mars (Olympus)": {
                "k": {"Instance Type": "p6e-gb300.72xlarge", "price": "900.0"},
                "m": {"Instance Type": "p5.48xlarge", "price": "55.04"},
            }
        }
    }
    result = parse_page("aws", _page("aws", body))
    (offer,) = result.offers
    assert (offer.gpu, offer.gpu_count, offer.region) == ("h100-sxm", 8, "Mars (Olympus)")
    # no known GPU count: the $900 instance is quarantined with its raw name, not one GPU at $900
    (rejected,) = result.report.rejected
    assert rejected.raw == "p6e-gb300.72xlarge | Mars (Olympus) | on-demand | price='900.0'"
    assert "GPU count unknown, $900.0 per instance-hour not priced per GPU" in rejected.reason
    assert result.report.unknown_gpus == ["p6e-gb300.72xlarge"]


def test_oci_a_renamed_display_name_field_is_a_missing_structure() -> None:
    body = {"items": [{"partNumber": "B1", "name": "Compute - GPU - H100", "currencyCodeLocalizations": []}]}
    with pytest.raises(StructureMissing, match="no 'Compute - GPU' items in the price list"):
        parse_page("oci", _page("oci", body))


def test_vast_missing_price_fields_and_a_renamed_gpu_name() -> None:
    offers = [
        {
            "id": 1,
            "gpu_name": "H100 SXM",
            "num_gpus": 1,
            "gpu_ram": 81559,
            "extra_field": {"a": 1},
        },  # no prices
        {"id": 2, "gpu": "H100 SXM", "num_gpus": 1, "dph_total": 2.0},  # gpu_name renamed
        {"id": 3, "gpu_name": "H100 SXM", "num_gpus": 1, "gpu_ram": 81559, "dph_total": 2.0},
    ]
    result = parse_page("vastai", _page("vastai", {"offers": offers}))
    # one priced listing: its ask is the cheapest now; too few listings for a median
    assert [(o.tier, o.price_basis, o.usd_per_gpu_hour, o.capacity) for o in result.offers] == [
        ("on_demand", "lowest_now", 2.0, 1),
    ]
    assert [r.reason for r in result.report.rejected] == ["listing without gpu_name or a whole num_gpus"]
