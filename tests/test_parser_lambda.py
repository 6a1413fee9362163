"""Lambda parser: tabbed instance tables, the older Next.js escaped-HTML layout, the archive."""

from __future__ import annotations

import gzip

import pytest

from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.providers import lambda_cloud
from parser_support import (
    archive_dir,
    archive_observations,
    archive_page_names,
    assert_archive_sources_copied,
    assert_registered,
    dumped,
    fixture_dir,
    full_offer,
    live_request_summary,
    parse_archive_page,
)

FIXTURES = fixture_dir("lambda")
ARCHIVE = archive_dir("lambda")


def offer(**fields: object) -> dict:
    """An expected offer with every field: Lambda defaults, overridden per offer."""
    return full_offer("lambda", **fields)


def parse_fixture(name: str):
    return lambda_cloud.parse((FIXTURES / name).read_bytes())


# GiB/TiB as the page shows them, in GB (1e9 bytes) as the offer stores them
GIB = 1.073741824
TIB = 1099.511627776


def test_tabs_give_the_count_and_catch_mismatches_unpriced_unknown_and_bad_rows() -> None:
    result = parse_fixture("tabs.html")
    assert dumped(result) == [
        offer(
            gpu="b200",
            gpu_raw="NVIDIA B200 SXM6",
            gpu_count=8,
            vram_gb=180.0,
            usd_per_gpu_hour=6.69,
            sku="8x NVIDIA B200 SXM6",
            vcpus=208.0,
            ram_gb=round(2900 * GIB, 1),
            storage_gb=round(22 * TIB, 1),
        ),
        offer(
            gpu="h100-sxm",
            gpu_raw="NVIDIA H100 SXM",
            gpu_count=8,
            vram_gb=80.0,
            usd_per_gpu_hour=3.99,
            sku="8x NVIDIA H100 SXM",
            vcpus=208.0,
            ram_gb=round(1800 * GIB, 1),
            storage_gb=round(22 * TIB, 1),
        ),
        offer(
            gpu="h100-sxm",
            gpu_raw="NVIDIA H100 SXM",
            gpu_count=4,
            vram_gb=80.0,
            usd_per_gpu_hour=4.09,
            sku="4x NVIDIA H100 SXM",
            vcpus=104.0,
            ram_gb=round(900 * GIB, 1),
            storage_gb=round(11 * TIB, 1),
        ),
        # no "1x" in the plan: the count comes from the 1x tab
        offer(
            gpu="gh200",
            gpu_raw="NVIDIA GH200",
            gpu_count=1,
            vram_gb=96.0,
            usd_per_gpu_hour=2.29,
            sku="1x NVIDIA GH200",
            vcpus=64.0,
            ram_gb=round(432 * GIB, 1),
            storage_gb=round(4 * TIB, 1),
        ),
        offer(
            gpu="a100-40gb",
            gpu_raw="NVIDIA A100 SXM",
            gpu_count=1,
            vram_gb=40.0,
            usd_per_gpu_hour=1.99,
            sku="1x NVIDIA A100 SXM",
            vcpus=30.0,
            ram_gb=round(220 * GIB, 1),
            storage_gb=round(512 * GIB, 1),
        ),
        offer(
            gpu="unknown",
            gpu_raw="NVIDIA Quadro RTX 6000",
            gpu_count=1,
            vram_gb=24.0,
            usd_per_gpu_hour=0.5,
            sku="1x NVIDIA Quadro RTX 6000",
            vcpus=14.0,
            ram_gb=round(46 * GIB, 1),
            storage_gb=round(512 * GIB, 1),
        ),
        offer(
            gpu="a10",
            gpu_raw="NVIDIA A10",
            gpu_count=1,
            vram_gb=24.0,
            usd_per_gpu_hour=1.29,
            sku="1x NVIDIA A10",
            vcpus=30.0,
            ram_gb=round(226 * GIB, 1),
            storage_gb=round(1.3 * TIB, 1),
        ),
    ]
    assert result.report.model_dump() == {
        "provider": "lambda",
        "parse_strategy": "structured",
        "rows_seen": 12,
        "offers": 7,
        "unpriced_rows": 2,  # GB300 "Contact sales", 2x H100 "Sold out": not offers, never $0
        "rejected": [
            {
                "raw": "On-demand 8x NVIDIA A100 SXM | 80 GB | 120 | 900 GiB | 10 TiB SSD | $2.89",
                "reason": "GPU count mismatch: tab says 4x, plan says 8x",
            },
            {
                "raw": "On-demand 1x NVIDIA A10 | 24 GB | 30 | 226 GiB | 1.3 TiB SSD | $1.29",
                "reason": "duplicate offer",
            },
            {
                "raw": "On-demand 1x NVIDIA H100 PCIe | 80 GB | 26 | 200 GiB | 1 TiB SSD | $x.xx",
                "reason": "not a price: '$x.xx'",
            },
        ],
        "unknown_gpus": ["NVIDIA Quadro RTX 6000"],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [],
    }


def test_reordered_and_extra_columns_nbsp_from_prices_thousands_and_regions() -> None:
    result = parse_fixture("reordered.html")
    assert dumped(result) == [
        offer(
            gpu="h100-sxm",
            gpu_raw="NVIDIA H100 SXM",
            gpu_count=8,
            vram_gb=80.0,
            usd_per_gpu_hour=2.99,
            region="us-east-1",
            sku="8x NVIDIA H100 SXM",
            vcpus=208.0,
            ram_gb=round(1800 * GIB, 1),
            storage_gb=round(22 * TIB, 1),
            price_basis="from",  # "from $2.99": a floor
        ),
        # VRAM cell empty: taken from the plan name
        offer(
            gpu="b200",
            gpu_raw="NVIDIA B200 SXM6 (180 GB)",
            gpu_count=1,
            vram_gb=180.0,
            usd_per_gpu_hour=6.99,
            region="us-south-2",
            sku="1x NVIDIA B200 SXM6 (180 GB)",
            vcpus=26.0,
            ram_gb=round(362 * GIB, 1),
            storage_gb=round(2.75 * TIB, 1),
        ),
    ]
    assert result.report.model_dump() == {
        "provider": "lambda",
        "parse_strategy": "structured",
        "rows_seen": 4,
        "offers": 2,
        "unpriced_rows": 1,
        "rejected": [
            {
                "raw": "$1.49 | NVIDIA GH200 | us-east-3 | NVLink-C2C | 96 GB | 4 TiB | 432 GiB | 64",
                "reason": "GPU count missing (no tab label and no 'Nx' in the plan)",
            },
        ],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": ["Interconnect"],
        "notes": ["'from' prices are lower bounds"],
    }


def test_older_layout_table_as_escaped_html_in_streamed_script_chunks() -> None:
    result = parse_fixture("nextjs_escaped.html")
    assert dumped(result) == [
        offer(
            gpu="h100-sxm",
            gpu_raw="NVIDIA H100 SXM",
            gpu_count=8,
            vram_gb=80.0,
            usd_per_gpu_hour=2.99,
            sku="8x NVIDIA H100 SXM",
            vcpus=208.0,
            ram_gb=round(1800 * GIB, 1),
            storage_gb=round(24.2 * TIB, 1),
        ),
        offer(
            gpu="gh200",
            gpu_raw="NVIDIA GH200",
            gpu_count=1,
            vram_gb=96.0,
            usd_per_gpu_hour=1.49,
            sku="1x NVIDIA GH200",
            vcpus=64.0,
            ram_gb=round(432 * GIB, 1),
            storage_gb=round(4 * TIB, 1),
        ),
        offer(
            gpu="a100-40gb",
            gpu_raw="NVIDIA A100 (40 GB SXM4)",
            gpu_count=1,
            vram_gb=40.0,
            usd_per_gpu_hour=1.29,
            sku="1x NVIDIA A100 (40 GB SXM4)",
            vcpus=30.0,
            ram_gb=round(200 * GIB, 1),
            storage_gb=round(512 * GIB, 1),
        ),
    ]
    assert result.report.model_dump() == {
        "provider": "lambda",
        "parse_strategy": "structured",
        "rows_seen": 4,
        "offers": 3,
        "unpriced_rows": 1,
        "rejected": [],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": ["table read from escaped HTML in script data (older Next.js layout)"],
    }


def test_older_layout_as_react_server_component_rows() -> None:
    result = parse_fixture("nextjs_rsc.html")
    assert dumped(result) == [
        offer(
            gpu="h100-sxm",
            gpu_raw="NVIDIA H100 SXM",
            gpu_count=8,
            vram_gb=80.0,
            usd_per_gpu_hour=2.99,
            sku="8x NVIDIA H100 SXM",
            vcpus=208.0,
            ram_gb=round(1800 * GIB, 1),
            storage_gb=round(22 * TIB, 1),
        ),
        offer(
            gpu="gh200",
            gpu_raw="NVIDIA GH200",
            gpu_count=1,
            vram_gb=96.0,
            usd_per_gpu_hour=1.49,
            sku="1x NVIDIA GH200",
            vcpus=64.0,
            ram_gb=round(432 * GIB, 1),
            storage_gb=round(4 * TIB, 1),
        ),
    ]
    assert result.report.model_dump() == {
        "provider": "lambda",
        "parse_strategy": "structured",
        "rows_seen": 3,
        "offers": 2,
        "unpriced_rows": 1,
        "rejected": [],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": ["table rebuilt from React Server Component rows in script data"],
    }


def test_tab_panels_linked_by_webflow_ids_or_aria_controls_and_an_unlabelled_plan_column() -> None:
    page = b"""
    <div class="w-tab-menu"><a data-w-tab="Tab 1" class="w-tab-link"><div>8x GPUs</div></a>
      <a data-w-tab="Tab 2" class="w-tab-link"><div>1x</div></a></div>
    <div data-w-tab="Tab 1" class="w-tab-pane"><table><tr><th></th><th>PRICE/GPU/HR*</th></tr>
      <tr><td>NVIDIA H100 SXM</td><td>$3.99</td></tr></table></div>
    <div data-w-tab="Tab 2" class="w-tab-pane"><table><tr><th></th><th>PRICE/GPU/HR*</th></tr>
      <tr><td>NVIDIA H100 SXM</td><td>$4.29</td></tr></table></div>
    <button role="tab" aria-controls="panel-four">4 GPUs</button>
    <div id="panel-four"><table><tr><th>Plan</th><th>PRICE/GPU/HR*</th></tr>
      <tr><td>NVIDIA H100 SXM</td><td>$4.09</td></tr></table></div>"""
    result = lambda_cloud.parse(page)
    assert [(o.gpu, o.gpu_count, o.usd_per_gpu_hour, o.sku) for o in result.offers] == [
        ("h100-sxm", 8, 3.99, "8x NVIDIA H100 SXM"),
        ("h100-sxm", 1, 4.29, "1x NVIDIA H100 SXM"),
        ("h100-sxm", 4, 4.09, "4x NVIDIA H100 SXM"),
    ]
    assert result.report.missing_columns == ["vram", "vcpus", "ram", "storage"]


def test_plain_price_column_is_per_instance_unless_the_cell_says_per_gpu() -> None:
    result = parse_fixture("per_instance_2023.html")
    assert dumped(result) == [
        offer(
            gpu="a100-80gb-sxm",
            gpu_raw="NVIDIA A100 SXM4 80GB",
            gpu_count=8,
            vram_gb=80.0,
            usd_per_gpu_hour=1.5,
            usd_per_instance_hour=12.0,
            sku="8x NVIDIA A100 SXM4 80GB",
            vcpus=240.0,
            ram_gb=round(1800 * GIB, 1),
        ),
        offer(
            gpu="h100-pcie",
            gpu_raw="NVIDIA H100 PCIe",
            gpu_count=1,
            vram_gb=80.0,
            usd_per_gpu_hour=1.99,
            sku="1x NVIDIA H100 PCIe",
            vcpus=26.0,
            ram_gb=round(200 * GIB, 1),
        ),
        offer(
            gpu="a6000",
            gpu_raw="NVIDIA A6000",
            gpu_count=4,
            vram_gb=48.0,
            usd_per_gpu_hour=0.8,
            usd_per_instance_hour=3.2,
            sku="4x NVIDIA A6000",
            vcpus=56.0,
            ram_gb=round(400 * GIB, 1),
        ),
    ]
    assert result.report.model_dump() == {
        "provider": "lambda",
        "parse_strategy": "structured",
        "rows_seen": 3,
        "offers": 3,
        "unpriced_rows": 0,
        "rejected": [],
        "unknown_gpus": [],
        "missing_columns": ["storage"],
        "unexpected_columns": [],
        "notes": [],
    }


def test_blocked_empty_and_tableless_pages_are_structure_missing() -> None:
    with pytest.raises(StructureMissing, match="lambda: .*Plan and PRICE columns") as caught:
        parse_fixture("captcha.html")
    assert caught.value.provider == "lambda"
    with pytest.raises(StructureMissing, match="empty page"):
        lambda_cloud.parse(b"")
    with pytest.raises(StructureMissing):
        lambda_cloud.parse(
            b"<html><body><table><tr><th>Plan</th><th>VRAM/GPU</th></tr></table></body></html>"
        )


def test_undecodable_bytes_and_gzip() -> None:
    body = (FIXTURES / "tabs.html").read_bytes().replace(b"<main>", b"<main>\xc3\x28")
    result = lambda_cloud.parse(gzip.compress(body))
    assert len(result.offers) == 7
    assert result.report.notes == ["page is not valid UTF-8: undecodable bytes replaced"]


def test_module_interface_through_the_registry() -> None:
    assert_registered(lambda_cloud, "lambda", "lambda/5", "https://lambda.ai/pricing")
    assert live_request_summary(lambda_cloud) == [
        ("https://lambda.ai/pricing", "GET", "html", False),  # primary
        ("https://lambda.ai/instances", "GET", "html", True),  # fallback
    ]


# --- sample archive --------------------------------------------------------------------------

ARCHIVE_COUNTS = {"2025-10-21.html": 10, "2026-05-24.html": 14, "2026-08-30.html": 14}
SLUGS = {
    "H100 SXM": "h100-sxm",
    "H100 PCIe": "h100-pcie",
    "A100 SXM 80GB": "a100-80gb-sxm",
    "A100 SXM 40GB": "a100-40gb",
    "A100 40GB": "a100-40gb",
    "A10": "a10",
    "A6000": "a6000",
    "B200": "b200",
    "GH200": "gh200",
}


def test_sample_archive_dates_and_layouts() -> None:
    assert archive_page_names("lambda") == list(ARCHIVE_COUNTS)
    assert "self.__next_f.push" in (ARCHIVE / "2025-10-21.html").read_text()  # the older layout
    assert 'role="tabpanel"' in (ARCHIVE / "2026-08-30.html").read_text()  # newest Lambda observation


@pytest.mark.parametrize("name", list(ARCHIVE_COUNTS))
def test_sample_archive_page_parses_cleanly(name: str) -> None:
    result = parse_archive_page(lambda_cloud, name, dated=False)
    assert len(result.offers) == ARCHIVE_COUNTS[name]
    assert result.report.missing_columns == [] and result.report.unpriced_rows == 0
    assert {o.gpu_count for o in result.offers} == {1, 2, 4, 8}


@pytest.mark.parametrize("name", list(ARCHIVE_COUNTS))
def test_sample_archive_carries_every_price_observed_on_its_date(name: str) -> None:
    offers = parse_archive_page(lambda_cloud, name, dated=False).offers
    prices = {(o.gpu, o.gpu_count): o.usd_per_gpu_hour for o in offers}
    observed = archive_observations("lambda", name)
    assert observed
    for row in observed:
        assert prices[(SLUGS[row["gpu"]], int(row["gpu_count"]))] == float(row["usd_per_gpu_hour"]), row


def test_known_prices_and_changes_across_archive_dates() -> None:
    def price(name: str, gpu: str, count: int) -> float:
        offers = parse_archive_page(lambda_cloud, name, dated=False).offers
        return next(o.usd_per_gpu_hour for o in offers if o.gpu == gpu and o.gpu_count == count)

    assert [price(n, "h100-sxm", 8) for n in ARCHIVE_COUNTS] == [2.99, 3.99, 3.99]
    assert [price(n, "b200", 8) for n in ARCHIVE_COUNTS] == [4.99, 6.69, 6.69]
    # provider-pages.md: the per-GPU price depends on size (B200 $6.69 at 8x, $6.99 at 1x)
    assert [price("2026-08-30.html", "b200", c) for c in (1, 2, 4, 8)] == [6.99, 6.89, 6.79, 6.69]


def test_sample_archive_sources_are_copied_from_the_cited_observations() -> None:
    assert_archive_sources_copied("lambda", ARCHIVE_COUNTS)
