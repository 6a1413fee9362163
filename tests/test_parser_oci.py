"""OCI parser: the price list API (paged, combined), GPU names mapped to shapes by the CSV."""

from __future__ import annotations

import pytest

from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.providers import oci
from parser_support import (
    archive_page_names,
    assert_archive_sources_copied,
    assert_offers,
    assert_registered,
    fixture_dir,
    full_offer,
    parse_archive_page,
    report_of,
)


def offer(**fields: object) -> dict:
    return full_offer("oci", **fields)


def test_gpu_items_are_per_gpu_prices_of_the_mapped_shapes() -> None:
    result = oci.parse((fixture_dir("oci") / "price_list.json").read_bytes())
    assert_offers(
        result,
        [
            offer(
                gpu="h100-sxm",
                gpu_raw="NVIDIA H100 80GB",
                gpu_count=8,
                vram_gb=80.0,
                usd_per_gpu_hour=10.0,
                usd_per_instance_hour=80.0,
                sku="BM.GPU.H100.8",
            ),
            # "OCI - " prefix of newer lists
            offer(
                gpu="mi300x",
                gpu_raw="AMD Instinct MI300X",
                gpu_count=8,
                vram_gb=192.0,
                usd_per_gpu_hour=6.0,
                usd_per_instance_hour=48.0,
                sku="BM.GPU.MI300X.8",
            ),
            # B33333 "Compute - GPU - X900": no shape in the CSV, quarantined (see the report)
        ],
    )
    assert report_of(result, "oci") == {
        "rows_seen": 5,
        "offers": 2,
        "unpriced_rows": 1,  # L40S without a value
        "rejected": [
            {
                "raw": 'B33333 | Compute - GPU - X900 | [{"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": 7.5}]}]',
                "reason": "Compute - GPU - X900 is not in the shape table (scrapers/data/instance_types.csv): "
                "GPU and shape unknown, $7.5 per GPU-hour not stored as an offer",
            },
            {
                "raw": 'B44444 | Compute - GPU - H200 | [{"currencyCode": "EUR", "prices": [{"model": "PAY_AS_YOU_GO", "value": 10}]}]',
                "reason": "no USD price",
            },
        ],
        "unknown_gpus": ["Compute - GPU - X900"],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [],
    }


def test_a_list_without_gpu_items_is_refused() -> None:
    with pytest.raises(StructureMissing) as info:
        oci.parse(
            b'{"items": [{"displayName": "Compute - Standard - E5 - OCPU", "metricName": "OCPU Per Hour"}]}'
        )
    assert info.value.what == "no 'Compute - GPU' items in the price list"


def test_paging_follows_the_next_link_while_has_more() -> None:
    (request,) = oci.live_requests()
    assert request.url == "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD"
    nxt = {"hasMore": True, "links": [{"rel": "next", "href": "https://apexapps.oracle.com/x?offset=100"}]}
    assert oci.next_page_request(request, nxt).url == "https://apexapps.oracle.com/x?offset=100"  # type: ignore[union-attr]
    assert oci.next_page_request(request, {**nxt, "hasMore": False}) is None


def test_sample_archive() -> None:
    names = archive_page_names("oci", (".json",))
    assert names == ["2026-04-14.json"]
    result = parse_archive_page(oci, names[0], dated=True)
    assert [(o.sku, o.usd_per_gpu_hour, o.region) for o in result.offers] == [
        ("BM.GPU.H100.8", 10.0, None),
        ("BM.GPU.H200.8", 12.25, None),
        ("BM.GPU.A100-v2.8", 4.0, None),
        ("BM.GPU.B200.8", 16.0, None),
    ]
    assert_archive_sources_copied("oci", names)


def test_registered() -> None:
    assert_registered(oci, "oci", "oci/3", "https://www.oracle.com/cloud/compute/pricing/")
