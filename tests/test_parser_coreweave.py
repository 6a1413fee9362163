"""CoreWeave parser: per-instance tables (with spot and reserved), ARIA grids, Classic, archive."""

from __future__ import annotations

import pytest

from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.providers import coreweave
from parser_support import (
    archive_observations,
    assert_archive_sources_copied,
    assert_registered,
    dumped,
    fixture_dir,
    full_offer,
    live_request_summary,
    parse_archive_page,
)

FIXTURES = fixture_dir("coreweave")


def offer(**fields: object) -> dict:
    """An expected offer with every field: CoreWeave defaults, overridden per offer."""
    return full_offer("coreweave", **fields)


def parse_fixture(name: str):
    return coreweave.parse((FIXTURES / name).read_bytes())


HGX = dict(gpu_count=8, vcpus=128.0, ram_gb=2048.0, storage_gb=61440.0)


def test_instance_prices_are_divided_by_the_gpu_count_with_spot_and_unpriced_rows() -> None:
    result = parse_fixture("instances_2026_10.html")
    h100 = dict(HGX, gpu="h100-sxm", gpu_raw="NVIDIA HGX H100", vram_gb=80.0, sku="NVIDIA HGX H100")
    assert dumped(result) == [
        offer(
            **HGX,
            gpu="b200",
            gpu_raw="NVIDIA HGX B200",
            vram_gb=180.0,
            sku="NVIDIA HGX B200",
            usd_per_gpu_hour=8.6,
            usd_per_instance_hour=68.8,
        ),
        offer(**h100, usd_per_gpu_hour=6.155, usd_per_instance_hour=49.24),
        offer(
            **h100, tier="spot", usd_per_gpu_hour=2.4638, usd_per_instance_hour=19.71
        ),  # 19.71 / 8, half up
        offer(
            gpu="gb200",
            gpu_raw="NVIDIA GB200 NVL72",
            gpu_count=4,
            vram_gb=186.0,
            sku="NVIDIA GB200 NVL72",
            usd_per_gpu_hour=10.5,
            usd_per_instance_hour=42.0,
            vcpus=144.0,
            ram_gb=960.0,
            storage_gb=30720.0,
        ),
        # thousands separator in the price (H20 was this fixture's unknown GPU until h20 joined
        # the catalog; unknown GPUs stay covered by the other parsers' fixtures)
        offer(
            **HGX,
            gpu="h20",
            gpu_raw="NVIDIA HGX H20",
            vram_gb=96.0,
            sku="NVIDIA HGX H20",
            usd_per_gpu_hour=154.32,
            usd_per_instance_hour=1234.56,
        ),
        offer(
            gpu="gh200",
            gpu_raw="NVIDIA GH200",
            gpu_count=1,
            vram_gb=96.0,
            sku="NVIDIA GH200",
            usd_per_gpu_hour=6.5,
            usd_per_instance_hour=6.5,
            vcpus=72.0,
            ram_gb=480.0,
            storage_gb=7680.0,
        ),
    ]
    assert result.report.model_dump() == {
        "provider": "coreweave",
        "parse_strategy": "structured",
        "rows_seen": 7,
        "offers": 6,
        "unpriced_rows": 1,  # HGX B300: "Contact sales" is not a $0 price
        "rejected": [
            {
                "raw": "NVIDIA L40 | — | 48 | 128 | 1,024 | 7.68 | $10.00 | —",
                "reason": "GPU count missing or invalid: '—'",
            },
            {
                "raw": "NVIDIA GH200 | 1 | 96 | 72 | 480 | 7.68 | $6.50 | $4,000.00",
                "reason": "usd_per_gpu_hour: Input should be less than 1000",
            },
        ],
        "unknown_gpus": [],  # "NVIDIA HGX H20" is h20 now
        "missing_columns": [],
        "unexpected_columns": [],  # the CPU-instance table is skipped, not reported
        "notes": [],
    }


def test_reordered_columns_units_in_cells_and_reserved_terms_from_headers() -> None:
    result = parse_fixture("reordered_reserved.html")
    h200 = dict(HGX, gpu="h200-sxm", gpu_raw="NVIDIA HGX H200", vram_gb=141.0, sku="NVIDIA HGX H200")
    assert dumped(result) == [
        offer(**h200, usd_per_gpu_hour=6.305, usd_per_instance_hour=50.44),
        offer(
            **h200, tier="reserved", commitment_months=12, usd_per_gpu_hour=3.75, usd_per_instance_hour=30.0
        ),
        offer(
            gpu="l40s",
            gpu_raw="NVIDIA L40S",
            gpu_count=8,
            vram_gb=48.0,
            sku="NVIDIA L40S",
            usd_per_gpu_hour=2.25,
            usd_per_instance_hour=18.0,
            vcpus=128.0,
            ram_gb=1024.0,
            storage_gb=7680.0,
        ),
        offer(
            gpu="a100-80gb-sxm",
            gpu_raw="NVIDIA HGX A100",
            gpu_count=8,
            sku="NVIDIA HGX A100",
            usd_per_gpu_hour=2.7,
            usd_per_instance_hour=21.6,
        ),
    ]
    assert result.report.model_dump() == {
        "provider": "coreweave",
        "parse_strategy": "structured",
        "rows_seen": 4,
        "offers": 4,
        "unpriced_rows": 1,  # B300: "Contact sales" and "$0.00" are both "no price"
        "rejected": [
            {
                "raw": "NVIDIA HGX A100 | 8 | $15.00 | $21.60",
                "reason": "reserved price without a term in its header 'Reserved price'",
            },
        ],
        "unknown_gpus": [],
        "missing_columns": ["vram", "vcpus", "ram", "storage"],  # the second table has none of them
        "unexpected_columns": ["Interconnect"],
        "notes": [],
    }


def test_aria_grid_of_divs_is_read_like_a_table() -> None:
    result = parse_fixture("aria_grid.html")
    assert dumped(result) == [
        offer(
            gpu="a100-80gb-sxm",
            gpu_raw="NVIDIA HGX A100",
            gpu_count=8,
            vram_gb=80.0,
            sku="NVIDIA HGX A100",
            usd_per_gpu_hour=2.7,
            usd_per_instance_hour=21.6,
            vcpus=128.0,
            ram_gb=2048.0,
            storage_gb=7680.0,
        ),
        offer(
            gpu="l40s",
            gpu_raw="NVIDIA L40S",
            gpu_count=8,
            vram_gb=48.0,
            sku="NVIDIA L40S",
            usd_per_gpu_hour=2.25,
            usd_per_instance_hour=18.0,
            vcpus=128.0,
            ram_gb=1024.0,
            storage_gb=7680.0,
        ),
    ]
    assert result.report.rows_seen == 2 and result.report.rejected == []


def test_classic_component_prices_are_one_gpu_offers_without_instance_price() -> None:
    result = parse_fixture("classic.html")
    assert dumped(result) == [
        offer(
            gpu="h100-sxm",
            gpu_raw="NVIDIA H100 HGX",
            gpu_count=1,
            vram_gb=80.0,
            usd_per_gpu_hour=4.76,
            sku="NVIDIA H100 HGX [GPU component]",
        ),
        offer(
            gpu="h100-pcie",
            gpu_raw="NVIDIA H100 PCIe",
            gpu_count=1,
            vram_gb=80.0,
            usd_per_gpu_hour=4.25,
            sku="NVIDIA H100 PCIe [GPU component]",
        ),
        offer(
            gpu="a100-80gb-sxm",
            gpu_raw="A100 80GB NVLINK",
            gpu_count=1,
            vram_gb=80.0,
            usd_per_gpu_hour=2.21,
            sku="A100 80GB NVLINK [GPU component]",
        ),
    ]
    assert result.report.model_dump() == {
        "provider": "coreweave",
        "parse_strategy": "structured",
        "rows_seen": 3,
        "offers": 3,
        "unpriced_rows": 0,
        "rejected": [],
        "unknown_gpus": [],
        "missing_columns": ["count", "storage"],
        "unexpected_columns": [],
        "notes": ["Classic GPU component prices exclude vCPU and RAM, which are billed per unit on top"],
    }


def test_login_page_and_tables_without_gpu_columns_are_structure_missing() -> None:
    with pytest.raises(StructureMissing, match="coreweave: .*GPU table") as caught:
        parse_fixture("login.html")
    assert caught.value.provider == "coreweave"
    cpu_only = b"<table><tr><th>CPU Model</th><th>vCPUs</th><th>Price / hr</th></tr><tr><td>AMD Genoa</td><td>192</td><td>$6.00</td></tr></table>"
    with pytest.raises(StructureMissing):
        coreweave.parse(cpu_only)
    with pytest.raises(StructureMissing, match="empty page"):
        coreweave.parse(b"\xef\xbb\xbf \n")


def test_the_documented_row_with_the_documented_headers() -> None:
    # provider-pages.md: "NVIDIA HGX B200 | 8 | 180 | 128 | 2,048 | 61.44 | $68.80"
    page = (
        b"<table><tr><th>Name</th><th>GPU count</th><th>VRAM per GPU</th><th>vCPUs</th><th>RAM GB</th>"
        b"<th>Local NVMe TB</th><th>Price per instance-hour</th></tr><tr><td>NVIDIA HGX B200</td><td>8</td>"
        b"<td>180</td><td>128</td><td>2,048</td><td>61.44</td><td>$68.80</td></tr></table>"
    )
    assert dumped(coreweave.parse(page)) == [
        offer(
            **HGX,
            gpu="b200",
            gpu_raw="NVIDIA HGX B200",
            vram_gb=180.0,
            sku="NVIDIA HGX B200",
            usd_per_gpu_hour=8.6,
            usd_per_instance_hour=68.8,
        ),
    ]


def test_count_from_the_name_when_there_is_no_count_column() -> None:
    page = (
        b"<table><tr><th></th><th>GPU memory</th><th>Price per instance-hour</th></tr>"
        b"<tr><td>8x NVIDIA HGX H100</td><td>80 GB</td><td>$49.24</td></tr></table>"
    )
    assert dumped(coreweave.parse(page)) == [
        offer(
            gpu="h100-sxm",
            gpu_raw="8x NVIDIA HGX H100",
            gpu_count=8,
            vram_gb=80.0,
            sku="8x NVIDIA HGX H100",
            usd_per_gpu_hour=6.155,
            usd_per_instance_hour=49.24,
        ),
    ]


def test_instance_price_without_a_gpu_count_column_is_rejected_not_guessed() -> None:
    page = (
        b"<table><tr><th>GPU Model</th><th>VRAM (GB)</th><th>Instance Price / hr</th></tr>"
        b"<tr><td>NVIDIA HGX H100</td><td>80</td><td>$49.24</td></tr></table>"
    )
    result = coreweave.parse(page)
    assert result.offers == []
    assert [r.reason for r in result.report.rejected] == ["GPU count missing or invalid: None"]


def test_module_interface_through_the_registry() -> None:
    assert_registered(coreweave, "coreweave", "coreweave/3", "https://www.coreweave.com/pricing")
    assert live_request_summary(coreweave) == [("https://www.coreweave.com/pricing", "GET", "html", False)]


# --- sample archive --------------------------------------------------------------------------

ARCHIVE_COUNTS = {"2025-05-29.html": 5, "2026-07-02.html": 6, "2026-08-30.html": 8, "2026-10-06.html": 9}
SLUGS = {
    "A100 SXM 80GB": "a100-80gb-sxm",
    "H100 SXM": "h100-sxm",
    "H200 SXM": "h200-sxm",
    "L40": "l40",
    "L40S": "l40s",
    "GH200": "gh200",
    "B200": "b200",
    "GB200": "gb200",
}


@pytest.mark.parametrize("name", list(ARCHIVE_COUNTS))
def test_sample_archive_page_parses_cleanly(name: str) -> None:
    result = parse_archive_page(coreweave, name, dated=False)
    assert len(result.offers) == ARCHIVE_COUNTS[name]
    assert result.report.missing_columns == []
    assert all(
        o.usd_per_instance_hour == pytest.approx(o.usd_per_gpu_hour * o.gpu_count, abs=0.001)
        for o in result.offers
    )


@pytest.mark.parametrize("name", list(ARCHIVE_COUNTS))
def test_sample_archive_carries_every_price_observed_on_its_date(name: str) -> None:
    prices = {
        (o.gpu, o.gpu_count, o.tier): o.usd_per_gpu_hour
        for o in parse_archive_page(coreweave, name, dated=False).offers
    }
    observed = archive_observations("coreweave", name)
    assert observed
    for row in observed:
        # 2025-05-29's source rounded $49.24/8 = 6.155 to 6.16 (see SOURCES.md)
        assert prices[(SLUGS[row["gpu"]], int(row["gpu_count"]), row["tier"])] == pytest.approx(
            float(row["usd_per_gpu_hour"]), abs=0.0051
        ), row


def test_known_prices_lineup_and_spot_across_archive_dates() -> None:
    parsed = {n: parse_archive_page(coreweave, n, dated=False) for n in ARCHIVE_COUNTS}
    assert [
        next(o.usd_per_instance_hour for o in r.offers if o.gpu == "h100-sxm") for r in parsed.values()
    ] == [49.24] * 4
    assert ["b200" in {o.gpu for o in r.offers} for r in parsed.values()] == [False, False, True, True]
    spot = [o for o in parsed["2026-10-06.html"].offers if o.tier == "spot"]
    assert [(o.gpu, o.usd_per_instance_hour) for o in spot] == [("h100-sxm", 19.71)]
    assert parsed["2026-10-06.html"].report.unpriced_rows == 1  # HGX B300 "Contact sales"


def test_sample_archive_sources_are_copied_from_the_cited_observations() -> None:
    assert_archive_sources_copied("coreweave", ARCHIVE_COUNTS)
