"""Crusoe pages with ordinary drift, written from the documented card structure (fixtures/pages/crusoe/drift).

Every field of every offer is asserted, and which reader produced them.
"""

from __future__ import annotations

import datetime as dt

from gpuprice.scrapers.offer import ParseResult
from gpuprice.scrapers.registry import parse_page
from parser_support import assert_offers, fixture_dir, full_offer, report_of

DRIFT = fixture_dir("crusoe") / "drift"


def parse_drift(name: str) -> ParseResult:
    return parse_page("crusoe", (DRIFT / name).read_bytes(), observed_on=dt.date(2026, 10, 6))


def card(gpu: str, gpu_raw: str, vram_gb: float, tier: str, price: float, months: int | None = None) -> dict:
    return full_offer(
        "crusoe",
        gpu=gpu,
        gpu_raw=gpu_raw,
        gpu_count=1,
        vram_gb=vram_gb,
        tier=tier,
        commitment_months=months,
        usd_per_gpu_hour=price,
        sku=gpu_raw,
    )


H100 = ("h100-sxm", "NVIDIA H100 80GB HGX", 80.0)
A100 = ("a100-80gb-sxm", "NVIDIA A100 80GB SXM", 80.0)
L40S = ("l40s", "NVIDIA L40S 48GB PCIe", 48.0)
H200 = ("h200-sxm", "NVIDIA H200 141GB HGX", 141.0)
B200 = ("b200", "NVIDIA B200 180GB HGX", 180.0)
MI300X = ("mi300x", "AMD MI300X 192GB", 192.0)
CLEAN = {
    "unpriced_rows": 0,
    "rejected": [],
    "unknown_gpus": [],
    "missing_columns": [],
    "unexpected_columns": [],
}


def test_unlabelled_on_demand_cells_are_the_first_price_of_each_card() -> None:
    # Before the tolerant reader: 3 spot offers and 6 rejected rows, every on-demand price lost.
    result = parse_drift("unlabeled_on_demand.html")
    assert_offers(
        result,
        [
            card(*H100, "on_demand", 3.9),
            card(*H100, "spot", 1.6),
            card(*A100, "on_demand", 1.95),
            card(*A100, "spot", 1.3),
            card(*L40S, "on_demand", 1.0),
            card(*L40S, "spot", 0.5),
            card(*H200, "on_demand", 4.29),  # spot "Contact sales": no offer
            card(*B200, "on_demand", 5.5),
            card(*MI300X, "on_demand", 3.45),
        ],
    )
    assert report_of(result, "crusoe") == {"rows_seen": 6, "offers": 9, **CLEAN, "notes": []}


def test_webflow_rebuild_renamed_classes_other_label_wording_entities_and_nbsp() -> None:
    result = parse_drift("rebuilt_classes_labels.html")
    assert_offers(
        result,
        [
            card(*H100, "on_demand", 3.9),  # "On-Demand", "&#36;3.90&nbsp;/GPU-hr"
            card(*H100, "spot", 1.6),  # "Preemptible"
            card(*H100, "reserved", 2.93, months=12),  # "Reserved (1 year)"
            card(*A100, "on_demand", 1.95),  # "ON DEMAND", "$&nbsp;1.95"
            card(*A100, "spot", 1.3),  # "spot", a non-breaking hyphen in the unit
            card(*L40S, "on_demand", 1.0),  # "On demand"
            card(*L40S, "spot", 0.5),
        ],
    )
    # A100 "Reserved (3 years)" reads "Contact sales": not an offer, and the card is priced.
    assert report_of(result, "crusoe") == {"rows_seen": 3, "offers": 7, **CLEAN, "notes": []}


def test_a_grid_rendered_twice_counts_each_offer_once() -> None:
    result = parse_drift("duplicated_grid.html")
    assert_offers(result, [card(*H200, "on_demand", 4.29)])
    assert report_of(result, "crusoe") == {
        "rows_seen": 4,
        "offers": 1,
        "unpriced_rows": 2,  # B200 twice: "Contact sales" only
        "rejected": [{"raw": "NVIDIA H200 141GB HGX | on_demand | $4.29", "reason": "duplicate offer"}],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [],
    }


def test_the_prices_as_a_plain_table_with_reordered_renamed_headers() -> None:
    result = parse_drift("plain_table.html")
    assert_offers(
        result,
        [
            card("h100-sxm", "NVIDIA H100 HGX 80GB", 80.0, "spot", 1.6),
            card("h100-sxm", "NVIDIA H100 HGX 80GB", 80.0, "on_demand", 3.9),
            card("h200-sxm", "NVIDIA H200 HGX 141GB", 141.0, "on_demand", 4.29),
            card("l40s", "NVIDIA L40S PCIe 48GB", 48.0, "spot", 0.5),
            card("l40s", "NVIDIA L40S PCIe 48GB", 48.0, "on_demand", 1.0),
        ],
    )
    assert report_of(result, "crusoe") == {"rows_seen": 3, "offers": 5, **CLEAN, "notes": []}


def test_cards_rendered_from_next_data_fall_back_to_the_json_strings() -> None:
    result = parse_drift("next_data.html")
    assert_offers(
        result,
        [
            card(*H100, "on_demand", 3.9),
            card(*H100, "spot", 1.6),
            card(*A100, "on_demand", 1.95),
            card(*A100, "spot", 1.3),
        ],
    )
    assert report_of(result, "crusoe", strategy="fallback") == {
        "rows_seen": 4,  # lines with a price
        "offers": 4,
        **CLEAN,
        "notes": [
            "structured reader found no price structure (no GPU card with a labelled price"
            " (on-demand/spot/reserved)); prices read by the fallback extractor"
        ],
    }
