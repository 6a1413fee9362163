"""Lambda pages with ordinary drift, written from the documented structure (fixtures/pages/lambda/drift).

Every field of every offer is asserted, and which reader produced them.
"""

from __future__ import annotations

import datetime as dt

from gpuprice.scrapers.offer import ParseResult
from gpuprice.scrapers.registry import parse_page
from parser_support import assert_offers, fixture_dir, full_offer, report_of

DRIFT = fixture_dir("lambda") / "drift"
# 1800 GiB, 22 TiB, ... in GB (1e9 bytes), as the parser converts them.
GIB = {1800: 1932.7, 2900: 3113.9, 900: 966.4, 450: 483.2, 360: 386.5, 432: 463.9}
TIB = {22: 24189.3, 11: 12094.6, 1: 1099.5, 2.75: 3023.7, 4: 4398.0}


def parse_drift(name: str) -> ParseResult:
    return parse_page("lambda", (DRIFT / name).read_bytes(), observed_on=dt.date(2026, 10, 6))


def plan(gpu: str, name: str, count: int, vram: float, price: float, **fields: object) -> dict:
    return (
        full_offer(
            "lambda",
            gpu=gpu,
            gpu_raw=name,
            gpu_count=count,
            vram_gb=vram,
            usd_per_gpu_hour=price,
            sku=f"{count}x {name}",
        )
        | fields
    )


def specs(vcpus: float, ram_gib: int, storage_tib: float) -> dict:
    return {"vcpus": vcpus, "ram_gb": GIB[ram_gib], "storage_gb": TIB[storage_tib]}


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


def test_reordered_renamed_columns_per_instance_beside_per_gpu_counts_and_entities() -> None:
    result = parse_drift("reordered_per_instance.html")
    assert_offers(
        result,
        [
            plan(
                "h100-sxm",
                "NVIDIA H100 SXM",
                8,
                80.0,
                5.99,
                usd_per_instance_hour=47.92,
                **specs(208, 1800, 22),
            ),
            # "On demand 8 &times; NVIDIA B200 SXM6"
            plan(
                "b200",
                "NVIDIA B200 SXM6",
                8,
                180.0,
                6.69,
                usd_per_instance_hour=53.52,
                **specs(208, 2900, 22),
            ),
            # No tier prefix and no count in the plan: the GPUs column says 1.
            plan("gh200", "NVIDIA GH200", 1, 96.0, 2.49, usd_per_instance_hour=2.49, **specs(64, 432, 4)),
        ],
    )
    assert report_of(result, "lambda") == report(4, 3, unpriced_rows=1)  # 2x A100 "Sold out"


def test_webflow_tabs_rebuilt_give_the_count_tier_prefix_in_any_case_and_a_repeated_row() -> None:
    result = parse_drift("tabs_rebuilt.html")
    assert_offers(
        result,
        [
            plan("b200", "NVIDIA B200 SXM6", 8, 180.0, 6.69, **specs(208, 2900, 22)),
            plan("h100-sxm", "NVIDIA H100 SXM", 4, 80.0, 3.09, **specs(104, 900, 11)),  # "ON-DEMAND"
            plan("a100-40gb", "NVIDIA A100 SXM", 2, 40.0, 1.99, **specs(60, 450, 1)),  # no prefix
            plan("b200", "NVIDIA B200 SXM6", 1, 180.0, 6.99, **specs(26, 360, 2.75)),  # per-GPU price by size
        ],
    )
    repeated = "On-Demand NVIDIA B200 SXM6 | 180 GB | 208 | 2900 GiB | 22 TiB SSD | $6.69"
    assert report_of(result, "lambda") == report(
        5, 4, rejected=[{"raw": repeated, "reason": "duplicate offer"}]
    )


def test_escaped_html_split_mid_tag_across_flight_chunks() -> None:
    result = parse_drift("escaped_chunks.html")
    assert_offers(
        result,
        [
            plan(
                "h100-sxm",
                "NVIDIA H100 SXM",
                8,
                80.0,
                2.99,
                usd_per_instance_hour=23.92,
                **specs(208, 1800, 22),
            ),
            plan("gh200", "NVIDIA GH200", 1, 96.0, 1.49, usd_per_instance_hour=1.49, **specs(64, 432, 4)),
        ],
    )
    assert report_of(result, "lambda") == report(
        2, 2, notes=["table read from escaped HTML in script data (older Next.js layout)"]
    )


def test_rows_only_in_next_data_are_read_by_the_fallback() -> None:
    result = parse_drift("next_data.html")
    assert_offers(
        result,
        [
            plan("h100-sxm", "NVIDIA H100 SXM", 8, 80.0, 2.99),
            plan("gh200", "NVIDIA GH200", 1, 96.0, 1.49, sku="NVIDIA GH200"),
            plan("a10", "NVIDIA A10", 1, 24.0, 0.75, sku="NVIDIA A10"),
        ],
    )
    assert report_of(result, "lambda", strategy="fallback") == report(
        3,
        3,
        notes=[
            "structured reader found no price structure (no instance table with Plan and PRICE columns"
            " (login/captcha page or layout change)); prices read by the fallback extractor"
        ],
    )
