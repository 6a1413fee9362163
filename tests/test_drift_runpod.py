"""Runpod pages with ordinary drift, written from the documented structure (fixtures/pages/runpod/drift).

Prices are per GPU-hour of one-GPU pods; every field of every offer is asserted.
"""

from __future__ import annotations

import datetime as dt

from gpuprice.scrapers.offer import ParseResult
from gpuprice.scrapers.providers import runpod
from gpuprice.scrapers.registry import parse_page
from parser_support import assert_offers, fixture_dir, full_offer, report_of

DRIFT = fixture_dir("runpod") / "drift"


def parse_drift(name: str) -> ParseResult:
    return parse_page("runpod", (DRIFT / name).read_bytes(), observed_on=dt.date(2026, 10, 6))


def pod(gpu: str, raw: str, vram: float, price: float, **fields: object) -> dict:
    base = full_offer(
        "runpod", gpu=gpu, gpu_raw=raw, gpu_count=1, vram_gb=vram, usd_per_gpu_hour=price, sku=raw
    )
    return base | fields


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


def test_renamed_row_classes_found_by_their_price_attributes() -> None:
    result = parse_drift("rebuilt_classes.html")
    h100 = {"vcpus": 20.0, "ram_gb": 125.0}
    a100 = {"vcpus": 8.0, "ram_gb": 117.0}
    assert_offers(
        result,
        [
            pod("h100-sxm", "H100 SXM", 80.0, 2.99, **h100),
            pod("h100-sxm", "H100 SXM", 80.0, 2.69, community=True, **h100),
            pod("h100-sxm", "H100 SXM", 80.0, 1.75, tier="spot", **h100),
            # The attributes sit on an inner element: the row is its ancestor with the ?gpu= link.
            pod("a100-80gb-pcie", "A100 PCIe", 80.0, 1.64, **a100),
            pod("a100-80gb-pcie", "A100 PCIe", 80.0, 1.19, community=True, **a100),
        ],
    )
    assert report_of(result, "runpod") == report(2, 5)


def test_older_attribute_names_dollar_values_contact_sales_and_a_repeated_row() -> None:
    result = parse_drift("older_attributes.html")
    h200 = {"vcpus": 24.0, "ram_gb": 276.0}
    assert_offers(
        result,
        [
            pod("h200-sxm", "H200 SXM", 141.0, 4.39, **h200),  # "$ 4.39"
            pod("h200-sxm", "H200 SXM", 141.0, 3.99, community=True, **h200),
            pod("h200-sxm", "H200 SXM", 141.0, 3.19, tier="spot", **h200),
            pod("rtx-4090", "RTX 4090", 24.0, 0.34, community=True, vcpus=6.0, ram_gb=41.0),
        ],
    )
    repeated = (
        "H200 SXM | 141 GB VRAM | 276 GB RAM | 24 vCPUs | data-secure-cloud-price=$ 4.39"
        " | data-community-cloud-price=3.99 | data-secure-cloud-spot-price=3.19"
    )
    assert report_of(result, "runpod") == report(
        3, 4, rejected=[{"raw": repeated, "reason": "duplicate offer"}] * 3
    )


def test_gpu_types_inside_next_data_are_read_as_the_api_response() -> None:
    result = parse_drift("next_data.html")
    h100 = {"sku": "NVIDIA H100 80GB HBM3"}
    l40s = {"sku": "NVIDIA L40S"}
    assert_offers(
        result,
        [
            pod("h100-sxm", "H100 SXM", 80.0, 2.99, **h100),
            pod("h100-sxm", "H100 SXM", 80.0, 2.69, community=True, **h100),
            pod("h100-sxm", "H100 SXM", 80.0, 1.75, tier="spot", **h100),
            pod("l40s", "L40S", 48.0, 0.86, **l40s),
            pod("l40s", "L40S", 48.0, 0.79, community=True, **l40s),
            pod("l40s", "L40S", 48.0, 0.4, tier="spot", community=True, **l40s),
        ],
    )
    assert report_of(result, "runpod") == report(
        2, 6, notes=["gpuTypes read from the page's Next.js data", runpod.NO_CLOUD_FLAGS_NOTE]
    )


def test_visible_prices_only_keep_the_labelled_spot_price_and_reject_the_unlabelled_one() -> None:
    # Secure and community cloud are separate markets: Runpod's documented structure names no
    # default tier or market for an unlabelled price, so the fallback never guesses one.
    result = parse_drift("visible_text_only.html")
    raw = "H100 SXM 80 GB VRAM"
    assert_offers(result, [pod("h100-sxm", raw, 80.0, 1.75, tier="spot")])
    assert report_of(result, "runpod", strategy="fallback") == report(
        2,
        1,
        rejected=[{"raw": "$2.99/hr", "reason": "fallback: price without an on-demand/spot/reserved label"}],
        notes=[
            "structured reader found no price structure (no .gpu-pricing-row elements on the pricing"
            " page (login/captcha page or layout change)); prices read by the fallback extractor"
        ],
    )
