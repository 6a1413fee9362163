"""Nebius pages with ordinary drift, written from the documented structure (fixtures/pages/nebius/drift).

Every field of every offer is asserted. The App Router page (flight data, no __NEXT_DATA__) must
parse exactly as the Pages Router one does.
"""

from __future__ import annotations

import datetime as dt

from gpuprice.scrapers.offer import ParseResult
from gpuprice.scrapers.registry import parse_page
from parser_support import assert_offers, fixture_dir, full_offer, report_of

DRIFT = fixture_dir("nebius") / "drift"
FROM_L40S = "'from' prices (lowest host variant): NVIDIA L40S with {}"


def parse_drift(name: str, observed_on: dt.date = dt.date(2026, 10, 6)) -> ParseResult:
    return parse_page("nebius", (DRIFT / name).read_bytes(), observed_on=observed_on)


def row(gpu: str, name: str, tier: str, price: float, **fields: object) -> dict:
    count = 8 if "HGX" in name else 1
    return (
        full_offer(
            "nebius", gpu=gpu, gpu_raw=name, gpu_count=count, tier=tier, usd_per_gpu_hour=price, sku=name
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


def test_app_router_flight_data_split_across_escaped_chunks_parses_exactly() -> None:
    result = parse_drift("app_router.html", observed_on=dt.date(2026, 9, 20))
    offers = []
    for gpu, name, spot, on_demand, scheduled, vcpus, ram in [
        ("b200", "NVIDIA HGX B200", 3.95, 7.15, 8.5, 160.0, 1792.0),
        ("h200-sxm", "NVIDIA HGX H200", 1.45, 3.5, 3.8, 128.0, 1600.0),
        ("h100-sxm", "NVIDIA HGX H100", 1.25, 2.95, 3.35, 128.0, 1600.0),
    ]:
        hgx = {"vcpus": vcpus, "ram_gb": ram}
        offers += [
            row(gpu, name, "spot", spot, **hgx),
            row(gpu, name, "on_demand", on_demand, **hgx),
            row(gpu, name, "on_demand", scheduled, effective_from="2026-10-01", **hgx),
        ]
    l40s = "NVIDIA L40S with Intel Sapphire Rapids"
    offers.append(row("l40s", l40s, "on_demand", 1.55, vcpus=8.0, ram_gb=32.0, price_basis="from"))
    assert_offers(result, offers)
    assert report_of(result, "nebius") == report(4, 10, notes=[FROM_L40S.format("Intel Sapphire Rapids")])


def test_renamed_reordered_headers_split_table_entities_and_a_repeated_preview_copy() -> None:
    result = parse_drift("renamed_reordered.html")
    spec = {"vcpus": 128.0, "ram_gb": 1600.0}
    assert_offers(
        result,
        [
            row("h100-sxm", "NVIDIA HGX H100", "on_demand", 2.95, **spec),
            row("h100-sxm", "NVIDIA HGX H100", "spot", 1.25, **spec),
            row("h200-sxm", "NVIDIA HGX H200", "on_demand", 3.5, **spec),  # "NVIDIA&nbsp;HGX&nbsp;H200"
            row("h200-sxm", "NVIDIA HGX H200", "spot", 1.45, **spec),
            row(
                "l40s",
                "NVIDIA L40S with AMD EPYC",
                "on_demand",
                1.55,
                vcpus=8.0,
                ram_gb=32.0,
                price_basis="from",
            ),
        ],
    )
    assert report_of(result, "nebius") == report(3, 5, notes=[FROM_L40S.format("AMD EPYC")])


def test_plain_table_with_counts_and_per_instance_beside_per_gpu_prices() -> None:
    result = parse_drift("plain_table_per_instance.html")
    l40s = "NVIDIA L40S with Intel Sapphire Rapids"
    assert_offers(
        result,
        [
            row("h100-sxm", "NVIDIA HGX H100", "on_demand", 2.95, usd_per_instance_hour=23.6),  # "8x"
            row("h100-sxm", "NVIDIA HGX H100", "spot", 1.25),
            row("b200", "NVIDIA HGX B200", "on_demand", 7.15, usd_per_instance_hour=57.2),  # "8 ×"
            row("b200", "NVIDIA HGX B200", "spot", 3.95),
            row("l40s", l40s, "on_demand", 1.55, usd_per_instance_hour=1.55, price_basis="from"),  # "1"
        ],
    )
    assert report_of(result, "nebius") == report(
        3,
        5,
        missing_columns=["vcpus", "ram"],
        notes=[FROM_L40S.format("Intel Sapphire Rapids")],
    )


def test_labels_in_other_case_and_wording_reserved_terms_and_a_duplicated_row() -> None:
    result = parse_drift("labels_case.html")
    assert_offers(
        result,
        [
            row("h200-sxm", "NVIDIA HGX H200", "spot", 1.45),  # "Spot (preemptible)"
            row("h200-sxm", "NVIDIA HGX H200", "on_demand", 3.5),  # "ON DEMAND"
            row("h200-sxm", "NVIDIA HGX H200", "reserved", 2.3, commitment_months=12),  # "Reserved (1 year)"
            row("b200", "NVIDIA HGX B200", "spot", 3.95),
            row("b200", "NVIDIA HGX B200", "on_demand", 7.15),
            row("b200", "NVIDIA HGX B200", "reserved", 5.0, commitment_months=12),
        ],
    )
    assert report_of(result, "nebius") == report(
        3,
        6,
        rejected=[
            {"raw": "NVIDIA HGX H200 | spot | $1.45", "reason": "duplicate offer"},
            {"raw": "NVIDIA HGX H200 | on_demand | $3.5", "reason": "duplicate offer"},
            {"raw": "NVIDIA HGX H200 | reserved | $2.3", "reason": "duplicate offer"},
        ],
        missing_columns=["vcpus", "ram"],
        unexpected_columns=["Reserved, per GPU-hour"],
        notes=["column 'Reserved, per GPU-hour' is a commitment price without a term; ignored"],
    )
