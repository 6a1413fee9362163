"""Massed Compute parser: fixture pages (every field of every offer, and the report) and the sample archive."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuprice.scrapers.offer import Offer, ParseResult
from gpuprice.scrapers.providers import massedcompute
from parser_support import (
    archive_observations,
    archive_page_names,
    assert_offers,
    assert_registered,
    assert_structure_missing,
    assert_undecodable_bytes_noted,
    fixture_dir,
    full_offer,
    live_request_summary,
    parse_archive_page,
    report_of,
)

FIXTURES = fixture_dir("massedcompute")


def parse_fixture(name: str) -> ParseResult:
    return massedcompute.parse((FIXTURES / name).read_bytes(), observed_on=dt.date(2026, 10, 6))


def expected_offer(
    *,
    gpu: str,
    gpu_raw: str,
    sku: str,
    gpu_count: int,
    usd_per_gpu_hour: float,
    usd_per_instance_hour: float,
    vram_gb: float | None,
    vcpus: float | None,
    ram_gb: float | None,
    storage_gb: float | None,
    region: str | None = None,
    available: bool | None = None,
    price_basis: str = "list",
) -> dict:
    """A full offer as Massed Compute prices it: on-demand instances priced per instance-hour."""
    return full_offer(
        "massedcompute",
        gpu=gpu,
        gpu_raw=gpu_raw,
        gpu_count=gpu_count,
        vram_gb=vram_gb,
        usd_per_gpu_hour=usd_per_gpu_hour,
        usd_per_instance_hour=usd_per_instance_hour,
        region=region,
        available=available,
        sku=sku,
        vcpus=vcpus,
        ram_gb=ram_gb,
        storage_gb=storage_gb,
        price_basis=price_basis,
    )


def test_table_with_reordered_columns_cross_checks_and_naming_traps() -> None:
    result = parse_fixture("table.html")
    assert_offers(
        result,
        [
            # gpu_1x_h100 is the H100 80GB PCIe card.
            expected_offer(
                gpu="h100-pcie",
                gpu_raw="H100 80GB PCIe",
                sku="gpu_1x_h100",
                gpu_count=1,
                usd_per_gpu_hour=2.73,
                usd_per_instance_hour=2.73,
                vram_gb=80.0,
                vcpus=20.0,
                ram_gb=128.0,
                storage_gb=750.0,
                region="US-Central",
            ),
            expected_offer(
                gpu="h100-pcie",
                gpu_raw="H100 80GB PCIe",
                sku="gpu_2x_h100",
                gpu_count=2,
                usd_per_gpu_hour=2.73,
                usd_per_instance_hour=5.46,
                vram_gb=80.0,
                vcpus=40.0,
                ram_gb=256.0,
                storage_gb=1500.0,
                region="US-Central",
            ),
            # A bare "H100" next to an SXM5 SKU is the SXM5 part; "2,048 GB" and "2 x 3.84 TB".
            expected_offer(
                gpu="h100-sxm",
                gpu_raw="H100",
                sku="gpu_8x_h100_sxm5",
                gpu_count=8,
                usd_per_gpu_hour=3.14,
                usd_per_instance_hour=25.12,
                vram_gb=80.0,
                vcpus=208.0,
                ram_gb=2048.0,
                storage_gb=7680.0,
                region="US-East",
            ),
            # The buying guide's figure: 8x B200 $43.46/h = $5.4325/GPU (the $5.43 column only checks it).
            expected_offer(
                gpu="b200",
                gpu_raw="B200 SXM6",
                sku="gpu_8x_b200",
                gpu_count=8,
                usd_per_gpu_hour=5.4325,
                usd_per_instance_hour=43.46,
                vram_gb=180.0,
                vcpus=224.0,
                ram_gb=2000.0,
                storage_gb=30000.0,
                region="US-East",
            ),
            # Thousands separator in the instance price.
            expected_offer(
                gpu="b300",
                gpu_raw="B300 SXM6",
                sku="gpu_8x_b300",
                gpu_count=8,
                usd_per_gpu_hour=131.6,
                usd_per_instance_hour=1052.8,
                vram_gb=288.0,
                vcpus=224.0,
                ram_gb=2000.0,
                storage_gb=30000.0,
                region="US-East",
            ),
            expected_offer(
                gpu="unknown",
                gpu_raw="Tenstorrent Blackhole p150a",
                sku="gpu_1x_bh150",
                gpu_count=1,
                usd_per_gpu_hour=0.65,
                usd_per_instance_hour=0.65,
                vram_gb=32.0,
                vcpus=8.0,
                ram_gb=64.0,
                storage_gb=500.0,
                region="US-Central",
            ),
            # "from $1.98" for two GPUs.
            expected_offer(
                gpu="l40s",
                gpu_raw="L40S",
                sku="gpu_2x_l40s",
                gpu_count=2,
                usd_per_gpu_hour=0.99,
                usd_per_instance_hour=1.98,
                vram_gb=48.0,
                vcpus=32.0,
                ram_gb=128.0,
                storage_gb=1000.0,
                region="US-Central",
                price_basis="from",
            ),
        ],
    )
    assert report_of(result, "massedcompute") == {
        "rows_seen": 12,  # group rows name GPUs, they are not instances
        "offers": 7,
        "unpriced_rows": 1,  # gpu_1x_h200_nvl "Sold out"
        "rejected": [
            {
                "raw": "NVIDIA H100: gpu_4x_h100 | $2.73 | 80 | H100 80GB PCIe | $10.92 | 8 | 512 GB | 3 TB | 80 GB | US-Central |  | Deploy",
                "reason": "GPU counts disagree: SKU says 4, GPU count column says 8",
            },
            {
                "raw": "Other: gpu_1x_l40 | $0.86 | 12 | L40 | $0.90 | 1 | 48 GB | 500 GB | 48 GB | US-Central |  | ",
                "reason": "per-GPU price $0.86 disagrees with instance price $0.90 / 1 GPUs",
            },
            {
                "raw": "Other: gpu_1x_h100 | $2.73 | 20 | H100 80GB PCIe | $2.73 | 1 | 128 GB | 750 GB | 80 GB | US-Central |  | Deploy",
                "reason": "duplicate offer",
            },
            {
                "raw": "Other: gpu_1x_h200_nvl | $3.62 | 24 | H200 SXM5 | $3.62 | 1 | 192 GB | 1 TB | 141 GB | US-Central |  | ",
                "reason": "GPU column ('H200 SXM5') and SKU ('gpu_1x_h200_nvl') name different GPUs",
            },
        ],
        "unknown_gpus": ["Tenstorrent Blackhole p150a"],
        "missing_columns": [],
        "unexpected_columns": ["Notes"],
        "notes": [
            "'from' price read as the price: Other: gpu_2x_l40s | $0.99 | 32 | L40S | from $1.98 | 2 | 128 GB"
            " | 1 TB | 48 GB | US-Central |  | "
        ],
    }


def test_labelled_rows_without_a_table_take_gpu_and_count_from_the_sku() -> None:
    result = parse_fixture("labelled_rows.html")
    assert_offers(
        result,
        [
            # The cheap H200 is the NVL card.
            expected_offer(
                gpu="h200-nvl",
                gpu_raw="gpu_1x_h200_nvl",
                sku="gpu_1x_h200_nvl",
                gpu_count=1,
                usd_per_gpu_hour=3.62,
                usd_per_instance_hour=3.62,
                vram_gb=None,
                vcpus=24.0,
                ram_gb=192.0,
                storage_gb=1000.0,
                available=True,
            ),
            expected_offer(
                gpu="h200-sxm",
                gpu_raw="gpu_8x_h200_sxm5",
                sku="gpu_8x_h200_sxm5",
                gpu_count=8,
                usd_per_gpu_hour=3.99,
                usd_per_instance_hour=31.92,
                vram_gb=None,
                vcpus=208.0,
                ram_gb=2000.0,
                storage_gb=30000.0,
                available=False,
            ),
            expected_offer(
                gpu="a6000",
                gpu_raw="RTX A6000",
                sku="gpu_2x_a6000",
                gpu_count=2,
                usd_per_gpu_hour=0.625,
                usd_per_instance_hour=1.25,
                vram_gb=None,
                vcpus=16.0,
                ram_gb=96.0,
                storage_gb=500.0,
                available=True,
            ),
        ],
    )
    assert report_of(result, "massedcompute") == {
        "rows_seen": 4,
        "offers": 3,
        "unpriced_rows": 0,
        "rejected": [
            {
                "raw": "NVIDIA L4: 8 | 32 GB | 250 GB | Available | $0.50",
                "reason": "GPU count missing (no SKU like gpu_1x_..., count column or '1x' in the name)",
            }
        ],
        "unknown_gpus": [],
        "missing_columns": ["sku", "gpu", "count", "vram"],
        "unexpected_columns": [],
        "notes": [],
    }


def test_per_gpu_price_only_and_count_from_the_name() -> None:
    page = (
        b"<table><tr><th>Configuration</th><th>$/GPU/hr</th><th>Price per month</th></tr>"
        b"<tr><td>4x NVIDIA L40S</td><td>$0.88</td><td>$2,569.60</td></tr></table>"
    )
    result = massedcompute.parse(page)
    assert_offers(
        result,
        [
            expected_offer(
                gpu="l40s",
                gpu_raw="4x NVIDIA L40S",
                sku="4x NVIDIA L40S",
                gpu_count=4,
                usd_per_gpu_hour=0.88,
                usd_per_instance_hour=None,
                vram_gb=None,
                vcpus=None,
                ram_gb=None,
                storage_gb=None,
            )
        ],
    )
    assert result.report.notes == ["column 'Price per month' is not an hourly price; ignored"]


@pytest.mark.parametrize(
    ("content", "what"),
    [
        (
            (FIXTURES / "login.html").read_bytes(),
            "no instance price table or labelled instance rows (need a GPU or instance name and a price)",
        ),
        (b"", "empty page"),
        (b" \r\n", "empty page"),
        # The price table moved away: only a spec table is left.
        (
            b"<html><body><table><tr><th>GPU</th><th>Memory bandwidth</th></tr>"
            b"<tr><td>H100 PCIe</td><td>2.0 TB/s</td></tr></table></body></html>",
            "no instance price table or labelled instance rows (need a GPU or instance name and a price);"
            " tables seen: GPU | Memory bandwidth",
        ),
    ],
)
def test_pages_without_a_price_structure_raise_structure_missing(content: bytes, what: str) -> None:
    assert_structure_missing(massedcompute.parse, content, "massedcompute", what)


def test_undecodable_bytes_are_replaced_and_noted() -> None:
    content = (FIXTURES / "table.html").read_bytes().replace(b"<main>", b"<main>\xc3\x28", 1)
    assert_undecodable_bytes_noted(massedcompute.parse(content), offers=7)


# ---------------------------------------------------------------- sample archive

ARCHIVE_COUNTS = {  # file -> offers (one row per instance size, all priced)
    "2025-10-29.html": 12,
    "2026-07-16.html": 26,
    "2026-08-30.html": 26,
    "2026-10-06.html": 27,
}


def archive_offers(name: str) -> list[Offer]:
    result = parse_archive_page(massedcompute, name, dated=True)
    report = result.report
    assert report.unpriced_rows == 0
    assert report.offers == report.rows_seen == ARCHIVE_COUNTS[name]
    return result.offers


def test_archive_holds_the_expected_dates() -> None:
    assert archive_page_names("massedcompute") == sorted(ARCHIVE_COUNTS)


@pytest.mark.parametrize("name", sorted(ARCHIVE_COUNTS))
def test_archive_page_parses_and_every_price_was_observed(name: str) -> None:
    offers = archive_offers(name)
    observed = {float(r["usd_per_gpu_hour"]) for r in archive_observations("massedcompute")}
    assert {o.usd_per_gpu_hour for o in offers} <= observed
    for o in offers:
        assert o.sku == f"gpu_{o.gpu_count}x_{o.sku.split('_', 2)[2]}"
        assert o.usd_per_instance_hour == pytest.approx(o.usd_per_gpu_hour * o.gpu_count, abs=0.006)
        assert o.vcpus and o.ram_gb and o.storage_gb and o.vram_gb


def by_sku(offers: list[Offer]) -> dict[str, Offer]:
    return {o.sku: o for o in offers}


def test_archive_known_prices_across_dates() -> None:
    october_2025 = by_sku(archive_offers("2025-10-29.html"))
    assert october_2025["gpu_1x_h100"].usd_per_gpu_hour == 2.35
    assert october_2025["gpu_1x_a100_pcie"].gpu == "a100-80gb-pcie"
    july = by_sku(archive_offers("2026-07-16.html"))
    assert (july["gpu_1x_h100"].gpu, july["gpu_1x_h100"].usd_per_gpu_hour) == ("h100-pcie", 2.73)
    assert (july["gpu_2x_h200_nvl"].gpu, july["gpu_2x_h200_nvl"].usd_per_instance_hour) == ("h200-nvl", 7.24)
    assert july["gpu_1x_l40s"].usd_per_gpu_hour == 0.88
    october = by_sku(archive_offers("2026-10-06.html"))
    b200 = october["gpu_8x_b200"]
    assert (b200.gpu, b200.gpu_count, b200.usd_per_instance_hour, b200.usd_per_gpu_hour) == (
        "b200",
        8,
        43.46,
        5.4325,
    )
    h100_sxm = october["gpu_8x_h100_sxm5"]
    assert (h100_sxm.gpu, h100_sxm.usd_per_instance_hour, h100_sxm.usd_per_gpu_hour) == (
        "h100-sxm",
        25.12,
        3.14,
    )
    assert "gpu_8x_h100_sxm5" not in by_sku(archive_offers("2026-08-30.html"))


def test_archive_pages_parse_without_an_observation_date() -> None:
    # As `gpuprice parse FILE` without --observed-on reads them. How fast is measured by
    # `make bench` (bench/parse_speed.py), never asserted in a test.
    for name in sorted(ARCHIVE_COUNTS):
        report = parse_archive_page(massedcompute, name, dated=False).report
        assert report.offers == ARCHIVE_COUNTS[name], name


def test_registry_exposes_the_module_interface() -> None:
    assert_registered(
        massedcompute, "massedcompute", "massedcompute/3", "https://vm.massedcompute.com/pricing"
    )
    assert live_request_summary(massedcompute) == [
        ("https://vm.massedcompute.com/pricing", "GET", "html", False)
    ]


def test_aria_grid_and_captions_under_their_values() -> None:
    grid = (
        b'<div role="table"><div role="row"><span role="columnheader">Instance</span>'
        b'<span role="columnheader">vCPUs</span><span role="columnheader">Hourly</span></div>'
        b'<div role="row"><span role="cell">gpu_4x_l40s</span><span role="cell">64</span>'
        b'<span role="cell">$3.52</span></div></div>'
    )
    assert_offers(
        massedcompute.parse(grid),
        [
            expected_offer(
                gpu="l40s",
                gpu_raw="gpu_4x_l40s",
                sku="gpu_4x_l40s",
                gpu_count=4,
                usd_per_gpu_hour=0.88,
                usd_per_instance_hour=3.52,
                vram_gb=None,
                vcpus=64.0,
                ram_gb=None,
                storage_gb=None,
            )
        ],
    )
    cards = (
        b'<div class="card"><h3>gpu_1x_l40</h3><div><span>$0.86/hr</span><span class="price-label">Price</span></div></div>'
        b'<div class="card"><h3>gpu_2x_l40</h3><div><span>$1.72/hr</span><span class="price-label">Price</span></div></div>'
    )
    assert [
        (o.sku, o.gpu, o.usd_per_gpu_hour, o.usd_per_instance_hour) for o in massedcompute.parse(cards).offers
    ] == [("gpu_1x_l40", "l40", 0.86, 0.86), ("gpu_2x_l40", "l40", 0.86, 1.72)]


def test_header_row_of_td_cells_and_data_rows_with_th_row_headers() -> None:
    page = (
        b"<table><tr><td>Instance</td><td>GPUs</td><td>Price/hr</td></tr>"
        b"<tr><th>gpu_2x_h100</th><td>2</td><td>$5.46</td></tr></table>"
    )
    assert [(o.sku, o.gpu, o.gpu_count, o.usd_per_gpu_hour) for o in massedcompute.parse(page).offers] == [
        ("gpu_2x_h100", "h100-pcie", 2, 2.73)
    ]
