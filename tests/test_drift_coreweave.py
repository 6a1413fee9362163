"""CoreWeave pages with ordinary drift, written from the documented structure (fixtures/pages/coreweave/drift).

Prices are per 8-GPU instance-hour on the page; every field of every offer is asserted.
"""

from __future__ import annotations

import datetime as dt

from gpuprice.scrapers.offer import ParseResult
from gpuprice.scrapers.registry import parse_page
from parser_support import assert_offers, fixture_dir, full_offer, report_of

DRIFT = fixture_dir("coreweave") / "drift"


def parse_drift(name: str) -> ParseResult:
    return parse_page("coreweave", (DRIFT / name).read_bytes(), observed_on=dt.date(2026, 10, 6))


def instance(
    gpu: str, name: str, count: int, vram: float, per_gpu: float, per_instance: float, **fields: object
) -> dict:
    return (
        full_offer(
            "coreweave",
            gpu=gpu,
            gpu_raw=name,
            gpu_count=count,
            vram_gb=vram,
            usd_per_gpu_hour=per_gpu,
            usd_per_instance_hour=per_instance,
            sku=name,
        )
        | fields
    )


def report(rows_seen: int, offers: int, **fields: object) -> dict:
    base = {
        "rows_seen": rows_seen,
        "offers": offers,
        "unpriced_rows": 0,
        "rejected": [],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [],
    }
    return base | fields


HGX_SPECS = {"vcpus": 128.0, "ram_gb": 2048.0, "storage_gb": 61440.0}


def test_renamed_reordered_headers_per_gpu_beside_per_instance_and_counts_in_any_form() -> None:
    result = parse_drift("renamed_per_gpu_beside_instance.html")
    assert_offers(
        result,
        [
            instance("h100-sxm", "NVIDIA HGX H100", 8, 80.0, 6.16, 49.24, **HGX_SPECS),  # "8x"
            instance("h100-sxm", "NVIDIA HGX H100", 8, 80.0, 2.4638, 19.71, tier="spot", **HGX_SPECS),
            instance("b200", "NVIDIA HGX B200", 8, 180.0, 8.6, 68.8, **HGX_SPECS),  # "8 &times;"
        ],
    )
    assert report_of(result, "coreweave") == report(3, 3, unpriced_rows=1)  # B300 "Contact sales"


def test_aria_grid_with_renamed_classes_and_a_repeated_row() -> None:
    result = parse_drift("aria_rebuilt.html")
    assert_offers(
        result,
        [
            instance("gh200", "NVIDIA GH200", 1, 96.0, 6.5, 6.5, vcpus=72.0, ram_gb=480.0),
            instance("l40s", "NVIDIA L40S", 8, 48.0, 2.25, 18.0, vcpus=128.0, ram_gb=1024.0),
        ],
    )
    assert report_of(result, "coreweave") == report(
        3,
        2,
        rejected=[{"raw": "NVIDIA L40S | $18.00 | 8 | 48 | 128 | 1,024", "reason": "duplicate offer"}],
        missing_columns=["storage"],
    )


def test_tier_labels_in_other_wording_a_termless_reserved_column_and_a_repeated_table() -> None:
    result = parse_drift("labels_reserved.html")
    assert_offers(
        result,
        [
            instance("h100-sxm", "NVIDIA HGX H100", 8, 80.0, 6.155, 49.24),  # "ON-DEMAND / hr"
            instance("h100-sxm", "NVIDIA HGX H100", 8, 80.0, 2.4638, 19.71, tier="spot"),  # "Preemptible"
            instance(
                "h100-sxm", "NVIDIA HGX H100", 8, 80.0, 4.3088, 34.47, tier="reserved", commitment_months=12
            ),
        ],
    )
    repeated = "NVIDIA HGX H100 | 8 | 80 | $49.24 | $19.71 | $34.47 | up to 60 % off"
    assert report_of(result, "coreweave") == report(
        2,
        3,
        rejected=[{"raw": repeated, "reason": "duplicate offer"}] * 3,
        missing_columns=["vcpus", "ram", "storage"],
        unexpected_columns=["Reserved"],  # "up to 60 % off" is not a price
    )


def test_rows_only_in_next_data_are_read_by_the_fallback_per_instance() -> None:
    result = parse_drift("next_data.html")
    assert_offers(
        result,
        [
            instance("h200-sxm", "NVIDIA HGX H200", 8, 141.0, 6.305, 50.44, sku="8x NVIDIA HGX H200"),
            instance("h100-sxm", "NVIDIA HGX H100", 8, 80.0, 6.155, 49.24, sku="8x NVIDIA HGX H100"),
        ],
    )
    assert report_of(result, "coreweave", strategy="fallback") == report(
        2,
        2,
        notes=[
            "structured reader found no price structure (no GPU table with name, GPU count and price"
            " columns (login/captcha page or layout change)); prices read by the fallback extractor"
        ],
    )
