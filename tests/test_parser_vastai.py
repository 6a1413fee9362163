"""Vast.ai parser: listings become per-day statistics per GPU and count (median, minimum, count)."""

from __future__ import annotations

import pytest

from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.providers import vastai
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


def stat(
    name: str, gpu: str, count: int, vram: float, tier: str, price: float, listings: int, basis: str = "list"
) -> dict:
    return full_offer(
        "vastai",
        gpu=gpu,
        gpu_raw=name,
        gpu_count=count,
        vram_gb=vram,
        tier=tier,
        community=True,
        usd_per_gpu_hour=price,
        usd_per_instance_hour=round(price * count, 4),
        available=True,
        sku=f"{name} x{count}",
        price_basis=basis,
        capacity=listings,
    )


H100 = ("H100 SXM", "h100-sxm")


def test_listings_become_median_minimum_and_count_per_gpu_and_count() -> None:
    result = vastai.parse((fixture_dir("vastai") / "bundles.json").read_bytes())
    assert_offers(
        result,
        [
            stat(*H100, 1, 80.0, "on_demand", 2.2, 3),  # median of 1.80, 2.20, 2.60
            stat(*H100, 1, 80.0, "on_demand", 1.8, 3, "lowest_now"),
            stat(*H100, 1, 80.0, "spot", 1.2, 2),  # median of the bids 1.10, 1.30
            stat(*H100, 1, 80.0, "spot", 1.1, 2, "lowest_now"),
            stat(*H100, 8, 80.0, "on_demand", 2.2, 2),  # 16.0 and 19.2 per 8 GPUs
            stat(*H100, 8, 80.0, "on_demand", 2.0, 2, "lowest_now"),
            stat(*H100, 8, 80.0, "spot", 1.2, 1),
            stat(*H100, 8, 80.0, "spot", 1.2, 1, "lowest_now"),
            # the rented and the half-GPU listings are not counted
            stat("RTX 4090", "rtx-4090", 2, 24.0, "on_demand", 0.35, 1),
            stat("RTX 4090", "rtx-4090", 2, 24.0, "on_demand", 0.35, 1, "lowest_now"),
            stat("Imaginary X9", "unknown", 1, 16.0, "on_demand", 0.9, 1),
            stat("Imaginary X9", "unknown", 1, 16.0, "on_demand", 0.9, 1, "lowest_now"),
        ],
    )
    assert report_of(result, "vastai") == {
        "rows_seen": 11,
        "offers": 12,
        "unpriced_rows": 0,
        "rejected": [
            {
                "raw": "10 | H100 SXM | x0 | dph_total=1.0",
                "reason": "listing without gpu_name or a whole num_gpus",
            },
            {"raw": "11 | H100 SXM | x1 | dph_total=-1.0", "reason": "dph_total: negative price: -1.0"},
        ],
        "unknown_gpus": ["Imaginary X9"],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": ["fractional-GPU listings skipped"],
    }


def test_a_response_without_offers_is_refused() -> None:
    with pytest.raises(StructureMissing) as info:
        vastai.parse(b'{"success": false, "error": "invalid_api_key"}')
    assert info.value.what == "no offers list in the bundles response"


def test_live_request_asks_for_rentable_machines() -> None:
    (request,) = vastai.live_requests()
    assert request.url.startswith("https://console.vast.ai/api/v0/bundles/?q=")
    assert "%22rentable%22%3A%7B%22eq%22%3Atrue%7D" in request.url
    assert request.kind == "json" and not request.combine


def test_sample_archive() -> None:
    names = archive_page_names("vastai", (".json",))
    assert names == ["2026-04-18.json"]
    result = parse_archive_page(vastai, names[0], dated=True)
    assert [(o.tier, o.price_basis, o.usd_per_gpu_hour, o.capacity, o.community) for o in result.offers] == [
        ("on_demand", "list", 2.5, 1, True),
        ("on_demand", "lowest_now", 2.5, 1, True),
        ("spot", "list", 1.87, 1, True),
        ("spot", "lowest_now", 1.87, 1, True),
    ]
    assert_archive_sources_copied("vastai", names)


def test_registered() -> None:
    assert_registered(vastai, "vastai", "vastai/1", "https://vast.ai/pricing")
