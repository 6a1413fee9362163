"""Crusoe parser: fixture pages (every field of every offer, and the report) and the sample archive."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuprice.scrapers.offer import Offer, ParseResult
from gpuprice.scrapers.providers import crusoe
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

FIXTURES = fixture_dir("crusoe")


def parse_fixture(name: str) -> ParseResult:
    return crusoe.parse((FIXTURES / name).read_bytes(), observed_on=dt.date(2026, 10, 6))


def expected_offer(
    *,
    gpu: str,
    gpu_raw: str,
    vram_gb: float,
    tier: str,
    usd_per_gpu_hour: float,
    commitment_months: int | None = None,
    price_basis: str = "list",
) -> dict:
    """A full offer as Crusoe prices it: per GPU-hour, no vCPU/RAM/region on the page."""
    return full_offer(
        "crusoe",
        gpu=gpu,
        gpu_raw=gpu_raw,
        gpu_count=1,
        vram_gb=vram_gb,
        tier=tier,
        commitment_months=commitment_months,
        usd_per_gpu_hour=usd_per_gpu_hour,
        sku=gpu_raw,
        price_basis=price_basis,
    )


H100 = dict(gpu="h100-sxm", gpu_raw="NVIDIA H100 80GB HGX", vram_gb=80.0)
A100_SXM = dict(gpu="a100-80gb-sxm", gpu_raw="NVIDIA A100 80GB SXM", vram_gb=80.0)
L40S = dict(gpu="l40s", gpu_raw="NVIDIA L40S 48GB PCIe", vram_gb=48.0)


def test_card_grid_labels_before_and_after_prices_contact_sales_and_rejects() -> None:
    result = parse_fixture("cards.html")
    assert_offers(
        result,
        [
            expected_offer(**H100, tier="on_demand", usd_per_gpu_hour=3.9),
            expected_offer(**H100, tier="spot", usd_per_gpu_hour=1.6),
            expected_offer(**H100, tier="reserved", usd_per_gpu_hour=2.93, commitment_months=12),
            expected_offer(**A100_SXM, tier="on_demand", usd_per_gpu_hour=1.95),  # price above its label
            expected_offer(**A100_SXM, tier="spot", usd_per_gpu_hour=1.3),
            expected_offer(
                gpu="unknown",
                gpu_raw="Tenstorrent Blackhole 32GB PCIe",
                vram_gb=32.0,
                tier="on_demand",
                usd_per_gpu_hour=0.75,
                price_basis="from",  # "from $0.75/GPU-hr": a floor
            ),
            expected_offer(**L40S, tier="on_demand", usd_per_gpu_hour=1.0),
        ],
    )
    assert report_of(result, "crusoe") == {
        "rows_seen": 5,  # H100, A100, B200, Tenstorrent, L40S; storage and footer are not GPU cards
        "offers": 7,
        "unpriced_rows": 1,  # B200: "Contact sales" only
        "rejected": [
            {
                "raw": "NVIDIA L40S 48GB PCIe | Reserved | $0.80/GPU-hr",
                "reason": "reserved price without a term in its label",
            },
            {
                "raw": "NVIDIA L40S 48GB PCIe | 3-year reserved | $1,234.50/GPU-hr",
                "reason": "invalid offer ($1234.50/GPU-hr): Input should be less than 1000",
            },
        ],
        "unknown_gpus": ["Tenstorrent Blackhole 32GB PCIe"],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [
            # per GiB-month, never an offer either way; the section goes before any reader sees it
            "section 'Storage' skipped: not GPU-instance prices",
            "'from' price read as the price: Tenstorrent Blackhole 32GB PCIe | On-demand | from $0.75/GPU-hr",
        ],
    }


def test_redesigned_markup_definition_lists_inline_labels_empty_cells_and_hidden_items() -> None:
    result = parse_fixture("variants.html")
    assert_offers(
        result,
        [
            expected_offer(
                gpu="h200-sxm",
                gpu_raw="NVIDIA H200 141GB HGX",
                vram_gb=141.0,
                tier="on_demand",
                usd_per_gpu_hour=4.29,
            ),
            # The empty SPOT cell stays empty: $2.10 belongs to "3-Year Reserved", written as "$" + "2.10".
            expected_offer(
                gpu="h200-sxm",
                gpu_raw="NVIDIA H200 141GB HGX",
                vram_gb=141.0,
                tier="reserved",
                usd_per_gpu_hour=2.1,
                commitment_months=36,
            ),
            expected_offer(
                gpu="mi300x",
                gpu_raw="AMD MI300X 192GB",
                vram_gb=192.0,
                tier="on_demand",
                usd_per_gpu_hour=3.45,
            ),
            expected_offer(
                gpu="mi300x", gpu_raw="AMD MI300X 192GB", vram_gb=192.0, tier="spot", usd_per_gpu_hour=0.95
            ),
            expected_offer(
                gpu="mi300x",
                gpu_raw="AMD MI300X 192GB",
                vram_gb=192.0,
                tier="reserved",
                usd_per_gpu_hour=2.6,
                commitment_months=6,
            ),  # "Six-month commitment"
            # The card's only price has no label: the first price of a card is on-demand.
            expected_offer(
                gpu="a100-40gb",
                gpu_raw="NVIDIA A100 40GB PCIe",
                vram_gb=40.0,
                tier="on_demand",
                usd_per_gpu_hour=1.45,
            ),
        ],
    )
    assert report_of(result, "crusoe") == {
        "rows_seen": 3,  # the hidden (w-condition-invisible) A40 card is not shown to visitors
        "offers": 6,
        "unpriced_rows": 0,
        "rejected": [],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [],
    }


@pytest.mark.parametrize(
    ("content", "what"),
    [
        (
            (FIXTURES / "captcha.html").read_bytes(),
            "no GPU card with a labelled price (on-demand/spot/reserved)",
        ),
        (b"", "empty page"),
        (b"\n  ", "empty page"),
        # Prices outside any card (no GPU heading above them) cannot be attributed.
        (
            b"<html><body><div><p>$3.90/GPU-hr</p></div><div><p>$4.29/GPU-hr</p></div></body></html>",
            "no GPU card with a labelled price (on-demand/spot/reserved)",
        ),
    ],
)
def test_pages_without_a_price_structure_raise_structure_missing(content: bytes, what: str) -> None:
    assert_structure_missing(crusoe.parse, content, "crusoe", what)


def test_undecodable_bytes_are_replaced_and_noted() -> None:
    content = (FIXTURES / "cards.html").read_bytes().replace(b"<section", b"\xff\xfe<section", 1)
    assert_undecodable_bytes_noted(crusoe.parse(content), offers=7)


# ---------------------------------------------------------------- sample archive

ARCHIVE_COUNTS = {  # file -> (offers, rows_seen, unpriced_rows)
    "2025-05-29.html": (6, 6, 0),
    "2026-02-26.html": (15, 8, 0),
    "2026-08-30.html": (6, 6, 0),
    "2026-10-06.html": (6, 7, 1),
}


def archive_offers(name: str) -> list[Offer]:
    result = parse_archive_page(crusoe, name, dated=True)
    report = result.report
    assert (report.offers, report.rows_seen, report.unpriced_rows) == ARCHIVE_COUNTS[name]
    return result.offers


def test_archive_holds_the_expected_dates() -> None:
    assert archive_page_names("crusoe") == sorted(ARCHIVE_COUNTS)


@pytest.mark.parametrize("name", sorted(ARCHIVE_COUNTS))
def test_archive_page_parses_and_every_price_was_observed(name: str) -> None:
    offers = archive_offers(name)
    observed = {(r["tier"], float(r["usd_per_gpu_hour"])) for r in archive_observations("crusoe")}
    assert {(o.tier, o.usd_per_gpu_hour) for o in offers} <= observed
    assert all(o.gpu_count == 1 and o.vram_gb and o.gpu != "unknown" for o in offers)


def price(offers: list[Offer], gpu: str, tier: str) -> list[float]:
    return [o.usd_per_gpu_hour for o in offers if o.gpu == gpu and o.tier == tier]


def test_archive_known_prices_across_dates() -> None:
    may_2025 = archive_offers("2025-05-29.html")
    assert price(may_2025, "h100-sxm", "on_demand") == [3.9]
    assert price(may_2025, "h100-sxm", "spot") == []  # spot rows hidden before 2026
    feb = archive_offers("2026-02-26.html")
    assert (
        price(feb, "h100-sxm", "spot"),
        price(feb, "a100-80gb-sxm", "spot"),
        price(feb, "l40s", "spot"),
    ) == ([1.6], [1.3], [0.5])
    assert price(feb, "l40s", "on_demand") == [1.0]
    october = archive_offers("2026-10-06.html")
    assert price(october, "l40s", "on_demand") == [1.5]
    assert price(october, "a100-80gb-sxm", "on_demand") == [2.3]
    assert [o for o in october if o.tier == "spot" or o.gpu == "b200"] == []  # "Contact sales"


def test_archive_pages_parse_without_an_observation_date() -> None:
    # As `gpuprice parse FILE` without --observed-on reads them. How fast is measured by
    # `make bench` (bench/parse_speed.py), never asserted in a test.
    for name in sorted(ARCHIVE_COUNTS):
        report = parse_archive_page(crusoe, name, dated=False).report
        assert (report.offers, report.rows_seen, report.unpriced_rows) == ARCHIVE_COUNTS[name], name


def test_registry_exposes_the_module_interface() -> None:
    assert_registered(crusoe, "crusoe", "crusoe/4", "https://crusoe.ai/cloud/pricing")
    assert live_request_summary(crusoe) == [("https://crusoe.ai/cloud/pricing", "GET", "html", False)]


def test_webflow_tab_panes_label_the_prices_inside_them() -> None:
    page = b"""<html><body><div class="w-tabs">
      <div class="w-tab-menu"><a data-w-tab="On-demand" class="w-tab-link">On-demand</a><a data-w-tab="Spot" class="w-tab-link">Spot</a></div>
      <div class="w-tab-content">
        <div data-w-tab="On-demand" class="w-tab-pane"><div class="card"><div class="pricing_gpu-name">NVIDIA H100</div><span>80GB</span><span>HGX</span><p>$3.90/GPU-hr</p></div></div>
        <div data-w-tab="Spot" class="w-tab-pane"><div class="card"><div class="pricing_gpu-name">NVIDIA H100</div><span>80GB</span><span>HGX</span><p>$1.60/GPU-hr</p></div></div>
      </div></div></body></html>"""
    result = crusoe.parse(page)
    assert_offers(
        result,
        [
            expected_offer(**H100, tier="on_demand", usd_per_gpu_hour=3.9),
            expected_offer(**H100, tier="spot", usd_per_gpu_hour=1.6),
        ],
    )
    assert (result.report.rows_seen, result.report.rejected) == (2, [])
