"""Massed Compute pages with ordinary drift, written from the documented structure
(fixtures/pages/massedcompute/drift). Prices are per instance-hour; every field of every offer is asserted.
"""

from __future__ import annotations

import datetime as dt

from gpuprice.scrapers.offer import ParseResult
from gpuprice.scrapers.registry import parse_page
from parser_support import assert_offers, fixture_dir, full_offer, report_of

DRIFT = fixture_dir("massedcompute") / "drift"
FALLBACK_NOTE = (
    "structured reader found no price structure (no instance price table or labelled instance rows"
    " (need a GPU or instance name and a price)); prices read by the fallback extractor"
)


def parse_drift(name: str) -> ParseResult:
    return parse_page("massedcompute", (DRIFT / name).read_bytes(), observed_on=dt.date(2026, 10, 6))


def instance(gpu: str, raw: str, count: int, per_instance: float, sku: str, **fields: object) -> dict:
    return (
        full_offer(
            "massedcompute",
            gpu=gpu,
            gpu_raw=raw,
            gpu_count=count,
            usd_per_gpu_hour=round(per_instance / count, 4),
            usd_per_instance_hour=per_instance,
            sku=sku,
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


def test_renamed_reordered_headers_counts_in_any_form_entities_and_a_repeated_row() -> None:
    result = parse_drift("renamed_counts.html")
    assert_offers(
        result,
        [
            instance(
                "h100-sxm",
                "H100 SXM5",
                8,
                25.12,
                "gpu_8x_h100_sxm5",
                vram_gb=80.0,
                vcpus=208.0,
                ram_gb=2048.0,
                storage_gb=7680.0,
            ),
            instance(
                "b200",
                "B200 SXM6",
                8,
                43.46,
                "gpu_8x_b200",
                vram_gb=180.0,
                vcpus=224.0,
                ram_gb=2000.0,
                storage_gb=30000.0,
            ),
            instance(
                "l40s",
                "L40S",
                1,
                0.88,
                "gpu_1x_l40s",
                vram_gb=48.0,
                vcpus=16.0,
                ram_gb=64.0,
                storage_gb=500.0,
            ),
        ],
    )
    repeated = "$0.88 | L40S | 1 | gpu_1x_l40s | 48 GB | 16 | 64 GB | 500 GB"
    assert report_of(result, "massedcompute") == report(
        4, 3, rejected=[{"raw": repeated, "reason": "duplicate offer"}]
    )


def test_redesigned_cards_of_definition_lists_with_labels_in_other_case() -> None:
    result = parse_drift("definition_cards.html")
    assert_offers(
        result,
        [
            # The SKU's naming rules: the cheap H200 is the NVL card, gpu_Nx_h100 the PCIe card.
            instance(
                "h200-nvl",
                "gpu_1x_h200_nvl",
                1,
                3.62,
                "gpu_1x_h200_nvl",
                vcpus=24.0,
                ram_gb=192.0,
                storage_gb=1000.0,
            ),
            instance(
                "h100-pcie",
                "gpu_4x_h100",
                4,
                10.92,
                "gpu_4x_h100",
                vcpus=80.0,
                ram_gb=512.0,
                storage_gb=3000.0,
            ),
        ],
    )
    assert report_of(result, "massedcompute") == report(2, 2, missing_columns=["gpu", "vram"])


def test_rows_only_in_next_data_objects_are_read_by_the_fallback() -> None:
    result = parse_drift("next_data.html")
    assert_offers(
        result,
        [
            instance("h100-pcie", "H100 80GB PCIe", 1, 2.73, "gpu_1x_h100", vram_gb=80.0),  # the SKU is kept
            instance("h100-pcie", "H100 80GB PCIe", 2, 5.46, "gpu_2x_h100", vram_gb=80.0),
            instance("b200", "B200 SXM6", 8, 43.46, "gpu_8x_b200"),
        ],
    )
    assert report_of(result, "massedcompute", strategy="fallback") == report(3, 3, notes=[FALLBACK_NOTE])


def test_rows_streamed_as_app_router_flight_data_are_read_by_the_fallback() -> None:
    result = parse_drift("app_router.html")
    assert_offers(
        result,
        [
            instance("a6000", "RTX A6000", 1, 0.62, "gpu_1x_a6000"),
            instance("a6000", "RTX A6000", 4, 2.48, "gpu_4x_a6000"),  # the GPUs column
            instance("l40", "L40", 1, 0.9, "gpu_1x_l40"),
        ],
    )
    assert report_of(result, "massedcompute", strategy="fallback") == report(3, 3, notes=[FALLBACK_NOTE])
