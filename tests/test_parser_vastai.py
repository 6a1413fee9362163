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
    assert_registered(vastai, "vastai", "vastai/5", "https://vast.ai/pricing")


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


def test_vram_is_the_cards_memory_as_sold_not_the_drivers_reading() -> None:
    """getcomputable/gpu-index tests/fixtures/observatory/vast/b300_asc.json, h200_nvl_asc.json and
    h100_sxm_asc.json @055204adf5e64e62595f97c49b7eb65400149871: ``gpu_ram`` 275040 MiB for a B300,
    143771 for an H200 NVL, 81559 for an H100 SXM, i.e. 269, 140 and 80 GiB: what the host's driver
    reports, the card less what ECC and the driver reserve. Before vastai/5 the offers said 269 and 140
    GB where every other provider states the size the card is sold with (B300 288 GB, H200 141 GB), and
    the ranking read a B300 at Vast.ai as a smaller card. Now ``vram_gb`` is the catalog's size as sold
    when the reading is that card's (>= 90 % of it); the SKU keeps the reading the listings were grouped
    by ("B300 269GB x2"), and a report note names each group read so. (MiB x 1.048576 = decimal GB would
    not give the sold size either: the H100's 81559 MiB is 85.5 GB, its card is sold as 80 GB.) Own
    listings in the search response's structure, cut to the fields read, prices invented:
    tests/fixtures/pages/vastai/sold_memory_listings.json."""
    result = vastai.parse((fixture_dir("vastai") / "sold_memory_listings.json").read_bytes())

    def vast(
        name: str, gpu: str, count: int, sold: float, sku: str, tier: str, price: float, n: int, basis: str
    ) -> dict:
        return {**stat(name, gpu, count, sold, tier, price, n, basis), "sku": sku}

    b300 = ("B300", "b300", 2, 288.0, "B300 269GB x2")
    assert_offers(
        result,
        [
            vast(*b300, "on_demand", 6.5, 3, "list"),  # 12, 13, 14 per two GPUs: median 6.50 per GPU
            vast(*b300, "on_demand", 6.0, 3, "lowest_now"),
            vast(*b300, "spot", 4.5, 3, "bid_floor"),  # bid floors 8, 9, 10: median 4.50 per GPU
            vast("H200 NVL", "h200-nvl", 1, 141.0, "H200 NVL 140GB x1", "on_demand", 2.5, 1, "lowest_now"),
            vast("H100 SXM", "h100-sxm", 1, 80.0, "H100 SXM 80GB x1", "on_demand", 1.5, 1, "lowest_now"),
        ],
    )
    assert result.report.notes[-1] == (
        "memory per GPU as the card is sold, not the listings' gpu_ram reading (GiB): "
        "B300 269 -> 288 GB, H200 NVL 140 -> 141 GB"
    )


@pytest.mark.parametrize(
    ("gpu", "reading", "vram"),
    [
        ("l40s", 45, 48.0),  # 46068 MiB: ECC on GDDR6 keeps 1/16 of the 48 GB card
        ("a100-40gb", 39, 40.0),
        ("rtx-4090", 24, 24.0),
        ("gh200", 143, 143.0),  # more than the catalog's 96 GB card: another part, the reading stays
        ("h100-sxm", 60, 60.0),  # far under the card: not that card's reading, it stays
        ("unknown", 20, 20.0),  # no catalog card: the reading
        ("unknown", None, None),
        ("h100-sxm", None, 80.0),  # no reading: the catalog card's size
    ],
)
def test_sold_memory(gpu: str, reading: int | None, vram: float | None) -> None:
    assert vastai.sold_memory(gpu, reading) == vram


def test_the_sold_memory_table_mirrors_the_gpu_catalog() -> None:
    """scrapers/data/gpu_memory.csv is the catalog's (slug, memory_gb), kept beside the scrapers
    because they may not import models (tests/test_layers.py); a catalog change must be mirrored."""
    from gpuprice.models.catalog import load_gpu_catalog
    from gpuprice.scrapers.gpu_memory import sold_memory_table

    catalog = load_gpu_catalog()
    assert sold_memory_table() == dict(zip(catalog["slug"], catalog["memory_gb"].astype(float), strict=True))
