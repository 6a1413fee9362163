"""Nebius parser: fixture pages (every field of every offer, and the report) and the sample archive."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from gpuprice.scrapers.offer import Offer, ParseResult
from gpuprice.scrapers.providers import nebius
from parser_support import (
    archive_observations,
    archive_page_names,
    assert_offers,
    assert_registered,
    assert_structure_missing,
    assert_undecodable_bytes_noted,
    dumped,
    fixture_dir,
    full_offer,
    live_request_summary,
    parse_archive_page,
    report_of,
)

FIXTURES = fixture_dir("nebius")


def parse_fixture(name: str, observed_on: dt.date | None = dt.date(2026, 10, 6)) -> ParseResult:
    return nebius.parse((FIXTURES / name).read_bytes(), observed_on=observed_on)


def expected_offer(
    *,
    gpu: str,
    gpu_raw: str,
    gpu_count: int,
    tier: str,
    usd_per_gpu_hour: float,
    vcpus: float | None,
    ram_gb: float | None,
    effective_from: str | None = None,
    price_basis: str = "list",
) -> dict:
    """A full offer as Nebius prices it: per GPU-hour, no region/availability on the page."""
    return full_offer(
        "nebius",
        gpu=gpu,
        gpu_raw=gpu_raw,
        gpu_count=gpu_count,
        tier=tier,
        usd_per_gpu_hour=usd_per_gpu_hour,
        effective_from=effective_from,
        price_basis=price_basis,
        sku=gpu_raw,
        vcpus=vcpus,
        ram_gb=ram_gb,
    )


H100 = dict(gpu="h100-sxm", gpu_raw="NVIDIA HGX H100", gpu_count=8, vcpus=128.0, ram_gb=1600.0)
H200 = dict(gpu="h200-sxm", gpu_raw="NVIDIA HGX H200", gpu_count=8, vcpus=128.0, ram_gb=1600.0)
B200 = dict(gpu="b200", gpu_raw="NVIDIA HGX B200", gpu_count=8, vcpus=160.0, ram_gb=1792.0)
B300 = dict(gpu="b300", gpu_raw="NVIDIA HGX B300", gpu_count=8, vcpus=192.0, ram_gb=2768.0)
L40S_INTEL = dict(
    gpu="l40s", gpu_raw="NVIDIA L40S with Intel Sapphire Rapids", gpu_count=1, vcpus=8.0, ram_gb=32.0
)


def test_current_layout_with_scheduled_prices_and_every_kind_of_bad_row() -> None:
    result = parse_fixture("current_layout.html")
    assert_offers(
        result,
        [
            expected_offer(**H100, tier="spot", usd_per_gpu_hour=0.79, price_basis="from"),  # "from $0.79"
            expected_offer(**H100, tier="on_demand", usd_per_gpu_hour=3.85),
            expected_offer(**H100, tier="on_demand", usd_per_gpu_hour=4.5, effective_from="2026-10-01"),
            expected_offer(**B200, tier="spot", usd_per_gpu_hour=3.95),
            expected_offer(**B200, tier="on_demand", usd_per_gpu_hour=7.15),
            expected_offer(**B200, tier="on_demand", usd_per_gpu_hour=8.5, effective_from="2026-10-01"),
            expected_offer(**L40S_INTEL, tier="on_demand", usd_per_gpu_hour=1.55, price_basis="from"),
            expected_offer(
                gpu="unknown",
                gpu_raw="Tenstorrent Galaxy Wormhole",
                gpu_count=1,
                vcpus=4.0,
                ram_gb=64.0,
                tier="on_demand",
                usd_per_gpu_hour=0.65,
            ),
            expected_offer(**B300, tier="spot", usd_per_gpu_hour=4.3),
        ],
    )
    assert report_of(result, "nebius") == {
        "rows_seen": 8,  # the "NVIDIA Hopper" section row is not a row; the CPU table is skipped
        "offers": 9,
        "unpriced_rows": 1,  # GB300 NVL72: "Contact sales" everywhere
        "rejected": [
            {
                "raw": "NVIDIA HGX B300 | 24 | 346 | $4.30 | $1,234.50 | -",
                "reason": "invalid offer from column 'On-demand, GPU-hour': usd_per_gpu_hour: Input should be less than 1000",
            },
            {
                "raw": "NVIDIA L40S with Intel Sapphire Rapids | on_demand | $1.55",
                "reason": "duplicate offer",
            },
            {
                "raw": "NVIDIA HGX A100 | 16 | 200 | — | TBD | —",
                "reason": "not a price in column 'On-demand, GPU-hour': 'TBD'",
            },
        ],
        "unknown_gpus": ["Tenstorrent Galaxy Wormhole"],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [
            "'from' prices (lowest host variant): NVIDIA HGX H100; NVIDIA L40S with Intel Sapphire Rapids"
        ],
    }


def test_swapped_preemptible_and_on_demand_columns_are_mapped_by_header() -> None:
    # A positional reader would record $2.45 / $2.15 (preemptible) as the on-demand price.
    result = parse_fixture("swapped_columns.html")
    assert_offers(
        result,
        [
            expected_offer(**H200, tier="on_demand", usd_per_gpu_hour=4.5),
            expected_offer(**H200, tier="spot", usd_per_gpu_hour=2.45),
            expected_offer(**H100, tier="on_demand", usd_per_gpu_hour=3.85),
            expected_offer(**H100, tier="spot", usd_per_gpu_hour=2.15),
        ],
    )
    assert report_of(result, "nebius") == {
        "rows_seen": 2,
        "offers": 4,
        "unpriced_rows": 0,
        "rejected": [],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": ["InfiniBand"],
        "notes": [],
    }


def test_old_four_column_layout_repeated_in_props_is_read_once() -> None:
    result = parse_fixture("old_layout.html", observed_on=None)
    assert_offers(
        result,
        [
            expected_offer(**H100, tier="on_demand", usd_per_gpu_hour=2.95),  # "$\u00a02.95"
            expected_offer(**H200, tier="on_demand", usd_per_gpu_hour=3.5),
            expected_offer(
                gpu="l40s",
                gpu_raw="NVIDIA L40S",
                gpu_count=1,
                vcpus=8.0,
                ram_gb=32.0,
                tier="on_demand",
                usd_per_gpu_hour=1.55,
                price_basis="from",
            ),  # "FROM $1.55"
        ],
    )
    assert report_of(result, "nebius") == {
        "rows_seen": 3,
        "offers": 3,
        "unpriced_rows": 0,
        "rejected": [],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": ["'from' prices (lowest host variant): NVIDIA L40S"],
    }


def next_data_page(data: object) -> bytes:
    return (
        '<html><body><div id="__next"></div><script id="__NEXT_DATA__" type="application/json">'
        + json.dumps(data)
        + "</script></body></html>"
    ).encode()


def test_effective_date_without_a_year_uses_the_observation_date() -> None:
    table = [
        ["GPU", "vCPU per GPU", "RAM per GPU", "On-demand", "On-demand (effective from 1st January)"],
        ["NVIDIA HGX H100", "16", "200", "$3.85", "$4.10"],
    ]
    page = next_data_page({"props": {"pageProps": {"t": table}}})

    late_in_year = nebius.parse(page, observed_on=dt.date(2026, 11, 20))
    assert [(o.usd_per_gpu_hour, o.effective_from) for o in late_in_year.offers] == [
        (3.85, None),
        (4.1, dt.date(2027, 1, 1)),
    ]

    unknown_year = nebius.parse(page)
    assert [(o.usd_per_gpu_hour, o.effective_from) for o in unknown_year.offers] == [(3.85, None)]
    assert unknown_year.report.notes == [
        "column 'On-demand (effective from 1st January)': cannot read its effective date; ignored"
    ]


def test_header_variants_name_column_and_instance_totals() -> None:
    table = [
        ["NVIDIA GPU", "vCPU per GPU", "RAM per instance, GB", "On-demand price"],
        ["NVIDIA HGX H200", "16", "1,600", "$4.50"],
    ]
    result = nebius.parse(next_data_page({"props": {"pageProps": {"t": table}}}))
    assert dumped(result) == [
        expected_offer(**H200, tier="on_demand", usd_per_gpu_hour=4.5)
    ]  # 16 x 8 vCPUs, RAM already a total


def test_missing_vcpu_and_ram_columns_are_reported_not_fatal() -> None:
    page = next_data_page(
        {"props": {"pageProps": {"t": [["GPU", "Price per GPU-hour"], ["NVIDIA L40S", "$1.55"]]}}}
    )
    result = nebius.parse(page)
    assert dumped(result) == [
        expected_offer(
            gpu="l40s",
            gpu_raw="NVIDIA L40S",
            gpu_count=1,
            vcpus=None,
            ram_gb=None,
            tier="on_demand",
            usd_per_gpu_hour=1.55,
        )
    ]
    assert result.report.missing_columns == ["vcpus", "ram"]


@pytest.mark.parametrize(
    ("content", "what"),
    [
        (
            (FIXTURES / "login.html").read_bytes(),
            'no <script id="__NEXT_DATA__">, App Router flight data or price <table> on the page',
        ),
        (b"", "empty page"),
        (b"  \n\t ", "empty page"),
        (
            b'<html><script id="__NEXT_DATA__" type="application/json">{"props": {"pageProps": </script></html>',
            "__NEXT_DATA__ is not valid JSON (Expecting value)",
        ),
        # The table moved out of the props: only CPU and storage tables are left.
        (
            next_data_page(
                {
                    "props": {
                        "pageProps": {
                            "cpu": [["Platform", "vCPU-hour"], ["Intel Ice Lake", "$0.0120"]],
                            "disk": [["Disk type", "Price per GB per month"], ["SSD", "$0.07"]],
                        }
                    }
                }
            ),
            "no GPU price table in the page data",
        ),
        # A GPU table whose price columns are gone.
        (
            next_data_page(
                {"props": {"pageProps": {"t": [["GPU", "vCPU per GPU"], ["NVIDIA HGX H100", "16"]]}}}
            ),
            "GPU table without name and price columns (headers: GPU | vCPU per GPU)",
        ),
    ],
)
def test_pages_without_a_price_structure_raise_structure_missing(content: bytes, what: str) -> None:
    assert_structure_missing(nebius.parse, content, "nebius", what)


def test_undecodable_bytes_are_replaced_and_noted() -> None:
    content = (FIXTURES / "old_layout.html").read_bytes().replace(b"<main>", b"<main>\xff\xfe caf\xe9")
    assert_undecodable_bytes_noted(nebius.parse(content), offers=3)


# ---------------------------------------------------------------- sample archive

ARCHIVE_COUNTS = {  # file -> (offers, rows_seen)
    "2025-05-29.html": (3, 3),
    "2026-07-16.html": (10, 6),
    "2026-08-30.html": (10, 6),
    "2026-10-06.html": (13, 6),
}


def archive_offers(name: str) -> list[Offer]:
    result = parse_archive_page(nebius, name, dated=True)
    assert (result.report.offers, result.report.rows_seen) == ARCHIVE_COUNTS[name]
    return result.offers


def test_archive_holds_the_expected_dates() -> None:
    assert archive_page_names("nebius") == sorted(ARCHIVE_COUNTS)


@pytest.mark.parametrize("name", sorted(ARCHIVE_COUNTS))
def test_archive_page_parses_and_every_price_was_observed(name: str) -> None:
    offers = archive_offers(name)
    rows = archive_observations("nebius")
    observed = {float(r["usd_per_gpu_hour"]) for r in rows}
    # Some values are stated in a row's notes ("older on-demand column (H100 3.85, ...)").
    observed |= {float(x) for r in rows for x in re.findall(r"\d+\.\d+", r["notes"])}
    assert {o.usd_per_gpu_hour for o in offers} <= observed
    assert all(o.provider == "nebius" and o.usd_per_instance_hour is None for o in offers)


def price(offers: list[Offer], gpu: str, tier: str, effective_from: dt.date | None = None) -> list[float]:
    return [
        o.usd_per_gpu_hour
        for o in offers
        if o.gpu == gpu and o.tier == tier and o.effective_from == effective_from
    ]


def test_archive_known_prices_across_dates() -> None:
    assert price(archive_offers("2025-05-29.html"), "h100-sxm", "on_demand") == [2.95]
    july = archive_offers("2026-07-16.html")
    assert price(july, "h100-sxm", "on_demand") == [3.85]
    assert price(july, "h100-sxm", "spot") == [2.15]
    assert price(july, "b200", "spot") == [3.95]
    october = archive_offers("2026-10-06.html")
    assert price(october, "h100-sxm", "on_demand") == [3.85]
    assert price(october, "h100-sxm", "on_demand", dt.date(2026, 10, 1)) == [4.5]
    assert price(october, "h200-sxm", "on_demand", dt.date(2026, 10, 1)) == [5.4]
    assert price(october, "b200", "on_demand", dt.date(2026, 10, 1)) == [8.5]
    assert price(october, "b200", "spot") == [0.99]
    assert sorted(price(october, "l40s", "on_demand")) == [1.55, 1.82]  # Intel and AMD hosts


def test_archive_pages_parse_without_an_observation_date() -> None:
    # As `gpuprice parse FILE` without --observed-on reads them. How fast is measured by
    # `make bench` (bench/parse_speed.py), never asserted in a test.
    for name in sorted(ARCHIVE_COUNTS):
        report = parse_archive_page(nebius, name, dated=False).report
        assert (report.offers, report.rows_seen) == ARCHIVE_COUNTS[name], name


def test_registry_exposes_the_module_interface() -> None:
    assert_registered(nebius, "nebius", "nebius/5", "https://nebius.com/prices")
    assert live_request_summary(nebius) == [("https://nebius.com/prices", "GET", "html", False)]
