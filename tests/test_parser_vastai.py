"""Vast.ai parser: listings become per-day statistics per GPU and count (median, minimum, count)."""

from __future__ import annotations

import json

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
        sku=f"{name} {vram:g}GB x{count}",
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
            # two bids (1.10, 1.30): too few for a median, and a minimum bid floor is no price
            # 16.0 and 19.2 per 8 GPUs: two asks, no median; the cheapest is 2.00 per GPU
            stat(*H100, 8, 80.0, "on_demand", 2.0, 2, "lowest_now"),
            # the rented listing is not counted
            stat("RTX 4090", "rtx-4090", 2, 24.0, "on_demand", 0.35, 1, "lowest_now"),
            # gpu_frac 0.5: one GPU of a two-GPU machine, a whole RTX 4090 at 0.30
            stat("RTX 4090", "rtx-4090", 1, 24.0, "on_demand", 0.3, 1, "lowest_now"),
            stat("Imaginary X9", "unknown", 1, 16.0, "on_demand", 0.9, 1, "lowest_now"),
        ],
    )
    assert report_of(result, "vastai") == {
        "rows_seen": 11,
        "offers": 6,
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
        "notes": [
            # asks: H100 x1 three, H100 x8 two, RTX 4090 x2 one, x1 one, X9 one; bids: two H100 x1, one H100 x8
            "statistics rest on 11 listings: 8 on-demand asks and 3 bid floors of 3 GPU names",
            "no median published with fewer than 3 listings: H100 SXM 80GB x1 spot (2), H100 SXM 80GB x8 on_demand (2), "
            "H100 SXM 80GB x8 spot (1), RTX 4090 24GB x2 on_demand (1), RTX 4090 24GB x1 on_demand (1), "
            "Imaginary X9 16GB x1 on_demand (1)",
        ],
    }


def test_a_response_without_offers_is_refused() -> None:
    with pytest.raises(StructureMissing) as info:
        vastai.parse(b'{"success": false, "error": "invalid_api_key"}')
    assert info.value.what == "no offers list in the bundles response"


def test_live_requests_are_the_general_search_then_one_per_datacenter_family() -> None:
    general, *families = vastai.live_requests()
    assert general.url.startswith("https://console.vast.ai/api/v0/bundles/?q=")
    assert "%22rentable%22%3A%7B%22eq%22%3Atrue%7D" in general.url
    assert general.kind == "json" and general.combine and not general.optional
    assert len(families) == len(vastai.DATACENTER_GPU_NAMES)
    assert all(r.combine and r.optional and r.kind == "json" for r in families)
    # the H100 search: {"gpu_name": {"in": ["H100 SXM", "H100 PCIE", "H100 NVL"]}, ...}
    assert (
        "%22gpu_name%22%3A%7B%22in%22%3A%5B%22H100%20SXM%22%2C%22H100%20PCIE%22%2C%22H100%20NVL%22%5D%7D"
        in (families[0].url)
    )
    assert "%22rentable%22%3A%7B%22eq%22%3Atrue%7D" in families[0].url


def test_sample_archive() -> None:
    names = archive_page_names("vastai", (".json",))
    assert names == ["2026-04-18.json"]
    result = parse_archive_page(vastai, names[0], dated=True)
    # one ask and one bid: the cheapest ask is kept, no median and no bid floor from one listing
    assert [(o.tier, o.price_basis, o.usd_per_gpu_hour, o.capacity, o.community) for o in result.offers] == [
        ("on_demand", "lowest_now", 2.5, 1, True),
    ]
    assert result.report.notes[-1] == (
        "no median published with fewer than 3 listings: H100 SXM 80GB x1 on_demand (1), H100 SXM 80GB x1 spot (1)"
    )
    assert_archive_sources_copied("vastai", names)


def test_registered() -> None:
    assert_registered(vastai, "vastai", "vastai/4", "https://vast.ai/pricing")


def test_a_combined_day_counts_a_listing_seen_by_two_searches_once() -> None:
    listing = {"id": 7, "gpu_name": "H200", "num_gpus": 1, "gpu_ram": 143771, "dph_total": 3.0}
    general = {"offers": [listing, {**listing, "id": 8, "dph_total": 3.2}]}
    h200_search = {"offers": [listing, {**listing, "id": 9, "dph_total": 3.6}]}
    document = {
        "format": "gpuprice-combined/1",
        "pages": [
            {"url": "https://console.vast.ai/api/v0/bundles/?q=general", "status": 200, "body": general},
            {"url": "https://console.vast.ai/api/v0/bundles/?q=h200", "status": 200, "body": h200_search},
            {"url": "https://console.vast.ai/api/v0/bundles/?q=b200", "error": "HTTP 429 after 4 attempts"},
        ],
    }
    result = vastai.parse(json.dumps(document).encode())
    # three listings (7 twice): median of 3.00, 3.20, 3.60 is 3.20
    assert [(o.price_basis, o.usd_per_gpu_hour, o.capacity) for o in result.offers] == [
        ("list", 3.2, 3),
        ("lowest_now", 3.0, 3),
    ]
    assert result.report.rows_seen == 3
    assert result.report.notes[0] == (
        "part missing: https://console.vast.ai/api/v0/bundles/?q=b200: HTTP 429 after 4 attempts"
    )
