"""Runpod parser: GraphQL JSON (primary) and HTML fallback, fixtures and the sample archive."""

from __future__ import annotations

import gzip
import json

import pytest

from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.providers import runpod
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

FIXTURES = fixture_dir("runpod")
ARCHIVE = archive_dir("runpod")


def offer(**fields: object) -> dict:
    """An expected offer with every field: Runpod defaults (one GPU), overridden per offer."""
    return full_offer("runpod", **{"gpu_count": 1, **fields})


def parse_fixture(name: str):
    return runpod.parse((FIXTURES / name).read_bytes())


# --- GraphQL ---------------------------------------------------------------------------------


def test_graphql_emits_every_price_field_with_its_tier_cloud_and_term() -> None:
    result = parse_fixture("graphql_full.json")
    h100 = dict(gpu="h100-sxm", gpu_raw="H100 SXM", vram_gb=80.0, sku="NVIDIA H100 80GB HBM3")
    b200 = dict(gpu="b200", gpu_raw="B200", vram_gb=180.0, sku="NVIDIA B200")
    h20 = dict(gpu="h20", gpu_raw="H20", vram_gb=96.0, sku="NVIDIA H20", community=True)
    a40 = dict(gpu="a40", gpu_raw="A40", vram_gb=48.0, sku="NVIDIA A40")
    assert dumped(result) == [
        offer(**h100, usd_per_gpu_hour=2.99),
        offer(**h100 | {"community": True}, usd_per_gpu_hour=2.69),
        offer(**h100, tier="spot", usd_per_gpu_hour=1.75),
        offer(**h100 | {"community": True}, tier="spot", usd_per_gpu_hour=1.25),
        offer(**h100, tier="reserved", commitment_months=0, usd_per_gpu_hour=2.79),  # one week
        offer(**h100, tier="reserved", commitment_months=1, usd_per_gpu_hour=2.69),
        offer(**h100, tier="reserved", commitment_months=3, usd_per_gpu_hour=2.59),
        offer(**h100, tier="reserved", commitment_months=6, usd_per_gpu_hour=2.49),
        offer(
            **h100,
            usd_per_gpu_hour=2.89,
            price_basis="lowest_now",
            available=True,
            capacity=8,  # availableGpuCounts [1, 2, 4, 8]
            vcpus=20.0,
            ram_gb=125.0,
        ),
        # stockStatus null: no machine in stock right now
        offer(
            **h100 | {"community": True},
            usd_per_gpu_hour=2.59,
            price_basis="lowest_now",
            available=False,
            capacity=0,  # availableGpuCounts []
            vcpus=16.0,
            ram_gb=62.0,
        ),
        offer(**b200, usd_per_gpu_hour=5.89),
        offer(**b200, tier="reserved", commitment_months=1, usd_per_gpu_hour=5.59),
        offer(**b200, usd_per_gpu_hour=5.89, price_basis="lowest_now", available=True),
        offer(**h20, usd_per_gpu_hour=0.18),
        offer(**h20, tier="spot", usd_per_gpu_hour=0.09),
        offer(**a40 | {"community": True}, usd_per_gpu_hour=0.35),
        # stockStatus not queried: availability unknown
        offer(**a40, usd_per_gpu_hour=0.35, price_basis="lowest_now", available=None),
    ]
    assert result.report.model_dump() == {
        "provider": "runpod",
        "parse_strategy": "structured",
        "rows_seen": 6,
        "offers": 17,
        "unpriced_rows": 1,
        "rejected": [
            {"raw": "NVIDIA A40 | securePrice=True", "reason": "not a price: True"},
            {
                "raw": '{"manufacturer": "no id or name here", "securePrice": 1.0}',
                "reason": "gpuType without an id or displayName",
            },
        ],
        "unknown_gpus": [],  # "H20" is h20 now
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": ["NVIDIA B200: communityPrice ignored, communityCloud is false"],
    }


def test_graphql_contract_dict_is_the_parse_contract() -> None:
    first = parse_fixture("graphql_full.json").offers[0]
    assert first.contract_dict() == {
        "provider": "runpod",
        "gpu": "h100-sxm",
        "gpu_raw": "H100 SXM",
        "gpu_count": 1,
        "vram_gb": 80.0,
        "tier": "on_demand",
        "community": False,
        "commitment_months": None,
        "usd_per_gpu_hour": 2.99,
        "usd_per_instance_hour": None,
        "region": None,
        "available": None,
        "effective_from": None,
        "price_basis": "list",
    }


def test_graphql_partial_errors_are_noted_and_a_community_only_lowest_price_is_community() -> None:
    body = {
        "data": {
            "gpuTypes": [
                {
                    "id": "NVIDIA GeForce RTX 4090",
                    "displayName": "RTX 4090",
                    "memoryInGb": 24,
                    "secureCloud": False,
                    "communityCloud": True,
                    "communityPrice": 0.34,
                    "lowestPrice": {"uninterruptablePrice": 0.29, "stockStatus": "Medium"},
                }
            ]
        },
        "errors": [{"message": "sixMonthPrice: field not available"}],
    }
    result = runpod.parse(json.dumps(body).encode())
    rtx = dict(
        gpu="rtx-4090", gpu_raw="RTX 4090", vram_gb=24.0, sku="NVIDIA GeForce RTX 4090", community=True
    )
    assert dumped(result) == [
        offer(**rtx, usd_per_gpu_hour=0.34),
        offer(**rtx, usd_per_gpu_hour=0.29, price_basis="lowest_now", available=True),
    ]
    assert result.report.notes == ["GraphQL error alongside data: sixMonthPrice: field not available"]


def test_graphql_errors_invalid_json_and_empty_lists_are_structure_missing() -> None:
    with pytest.raises(StructureMissing, match=r"no data\.gpuTypes.*Too many requests"):
        parse_fixture("graphql_errors.json")
    with pytest.raises(StructureMissing, match="invalid JSON"):
        parse_fixture("truncated.json")
    with pytest.raises(StructureMissing, match="gpuTypes"):
        runpod.parse(b'{"data": {"gpuTypes": []}}')
    with pytest.raises(StructureMissing, match="empty page"):
        runpod.parse(b"  \n")


# --- HTML fallback ---------------------------------------------------------------------------


def test_html_2026_10_attributes_spot_unpriced_bad_and_duplicate_rows() -> None:
    result = parse_fixture("pricing_2026_10.html")
    h100 = dict(gpu="h100-sxm", gpu_raw="H100 SXM", vram_gb=80.0, sku="H100 SXM", vcpus=20.0, ram_gb=125.0)
    b200 = dict(gpu="b200", gpu_raw="B200", vram_gb=180.0, sku="B200", vcpus=28.0, ram_gb=283.0)
    assert dumped(result) == [
        offer(**h100, usd_per_gpu_hour=3.49),
        offer(**h100, community=True, usd_per_gpu_hour=2.69),
        offer(**b200, usd_per_gpu_hour=6.79),
        offer(**b200, community=True, usd_per_gpu_hour=5.98),
        offer(**b200, tier="spot", usd_per_gpu_hour=4.49),
        # "Contact sales" on secure cloud: only the community price is an offer
        offer(
            gpu="rtx-2000-ada",
            gpu_raw="RTX 2000 Ada",
            vram_gb=16.0,
            sku="RTX 2000 Ada",
            vcpus=6.0,
            ram_gb=31.0,
            community=True,
            usd_per_gpu_hour=0.44,
        ),
        offer(
            gpu="l40",
            gpu_raw="L40",
            vram_gb=48.0,
            sku="L40",
            vcpus=8.0,
            ram_gb=94.0,
            community=True,
            usd_per_gpu_hour=0.69,
        ),
    ]
    h100_raw = "H100 SXM | 80 GB VRAM | 125 GB RAM | 20 vCPUs | data-secure=3.49 | data-community=2.69"
    assert result.report.model_dump() == {
        "provider": "runpod",
        "parse_strategy": "structured",
        "rows_seen": 6,
        "offers": 7,
        "unpriced_rows": 1,  # RTX 5090: empty and 0 prices are "not offered", never $0
        "rejected": [
            {
                "raw": "L40 | 48 GB VRAM | 94 GB RAM | 8 vCPUs | data-secure=call | data-community=0.69",
                "reason": "not a price: 'call'",
            },
            {"raw": h100_raw, "reason": "duplicate offer"},
            {"raw": h100_raw, "reason": "duplicate offer"},
        ],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": ["data-cluster-price"],
        "notes": [],
    }


def test_html_older_cloud_price_attributes_on_inner_elements_and_row_links() -> None:
    result = parse_fixture("pricing_2026_05.html")
    a100 = dict(
        gpu="a100-80gb-pcie", gpu_raw="A100 PCIe", vram_gb=80.0, sku="A100 PCIe", vcpus=8.0, ram_gb=117.0
    )
    h200 = dict(gpu="h200-sxm", gpu_raw="H200 SXM", vram_gb=141.0, sku="H200 SXM", vcpus=24.0, ram_gb=276.0)
    assert dumped(result) == [
        offer(**a100, usd_per_gpu_hour=1.39),
        offer(**a100, community=True, usd_per_gpu_hour=1.19),
        offer(**h200, usd_per_gpu_hour=4.39),
        offer(**h200, community=True, usd_per_gpu_hour=3.59),
        offer(
            gpu="h100-nvl",
            gpu_raw="H100 NVL",
            vram_gb=94.0,
            sku="H100 NVL",
            vcpus=16.0,
            ram_gb=94.0,
            community=True,
            usd_per_gpu_hour=2.59,
        ),
    ]
    assert result.report.model_dump() == {
        "provider": "runpod",
        "parse_strategy": "structured",
        "rows_seen": 3,
        "offers": 5,
        "unpriced_rows": 0,
        "rejected": [],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [],
    }


def test_html_label_first_spec_tags_from_prices_and_a_name_only_in_the_link() -> None:
    page = (
        b'<div class="gpu-pricing-row" data-community="from $0.34">'
        b'<span class="spec-tag">VRAM: 24 GB</span><span class="spec-tag">RAM 62 GB</span>'
        b'<span class="spec-tag">vCPU 8</span><a class="btn" href="/console/deploy?gpu=RTX+4090">Deploy</a></div>'
    )
    result = runpod.parse(page)
    assert dumped(result) == [
        offer(
            gpu="rtx-4090",
            gpu_raw="RTX 4090",
            vram_gb=24.0,
            community=True,
            usd_per_gpu_hour=0.34,
            sku="RTX 4090",
            vcpus=8.0,
            ram_gb=62.0,
            price_basis="from",
        ),
    ]
    assert result.report.notes == ["'from' prices are lower bounds"]


def test_login_or_captcha_page_is_structure_missing() -> None:
    with pytest.raises(StructureMissing, match=r"runpod: .*\.gpu-pricing-row") as caught:
        parse_fixture("login.html")
    assert caught.value.provider == "runpod"


def test_rows_without_any_price_attribute_are_structure_missing() -> None:
    page = b'<div class="gpu-pricing-row"><a href="/deploy?gpu=B200">B200</a><span>$5.98/hr</span></div>'
    with pytest.raises(StructureMissing, match="no price data attributes"):
        runpod.parse(page)


def test_undecodable_bytes_are_replaced_and_noted() -> None:
    body = (FIXTURES / "pricing_2026_05.html").read_bytes().replace(b"<main>", b"<main>\xff\xfe")
    result = runpod.parse(body)
    assert len(result.offers) == 5
    assert result.report.notes == ["page is not valid UTF-8: undecodable bytes replaced"]


def test_gzipped_body_is_inflated_and_a_gzip_bomb_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    body = (FIXTURES / "graphql_full.json").read_bytes()
    assert dumped(runpod.parse(gzip.compress(body))) == dumped(runpod.parse(body))
    monkeypatch.setattr(runpod, "_MAX_BODY_BYTES", 1000)
    with pytest.raises(StructureMissing, match="inflates past"):
        runpod.parse(gzip.compress(b" " * 5000))
    with pytest.raises(StructureMissing, match="corrupt gzip"):
        runpod.parse(b"\x1f\x8b\x08\x00garbage")


# --- interface -------------------------------------------------------------------------------


def test_module_interface_through_the_registry() -> None:
    assert_registered(runpod, "runpod", "runpod/10", "https://www.runpod.io/pricing")
    assert live_request_summary(runpod) == [
        ("https://api.runpod.io/graphql", "POST", "json", False),  # primary
        ("https://www.runpod.io/pricing", "GET", "html", True),  # fallback
    ]
    query = runpod.live_requests()[0].json_body["query"]
    for field in (
        "securePrice",
        "communityPrice",
        "secureSpotPrice",
        "communitySpotPrice",
        "oneWeekPrice",
        "sixMonthPrice",
        "uninterruptablePrice",
        "stockStatus",
        "communityLowestPrice: lowestPrice",
    ):
        assert field in query


# --- sample archive --------------------------------------------------------------------------

ARCHIVE_COUNTS = {"2026-05-24.html": 15, "2026-07-16.html": 16, "2026-08-30.json": 30, "2026-10-06.json": 16}
# observed_prices.csv names -> catalog slugs
SLUGS = {
    "H100 SXM": "h100-sxm",
    "H100 PCIe": "h100-pcie",
    "H100 NVL": "h100-nvl",
    "H200 SXM": "h200-sxm",
    "B200": "b200",
    "B300": "b300",
    "A100 SXM 80GB": "a100-80gb-sxm",
    "A100 PCIe 80GB": "a100-80gb-pcie",
    "L40S": "l40s",
    "L40": "l40",
}
# observed tier -> (community, price_basis)
TIERS = {
    "on_demand_secure": (False, "list"),
    "on_demand_community": (True, "list"),
    "on_demand_secure_api": (False, "lowest_now"),
    "on_demand_community_api": (True, "lowest_now"),
}


def test_sample_archive_has_json_for_the_newest_dates_and_html_before() -> None:
    pages = archive_page_names("runpod", (".html", ".json"))
    assert pages == list(ARCHIVE_COUNTS)
    assert pages[-1] == "2026-10-06.json"  # the newest Runpod observation date


@pytest.mark.parametrize("name", list(ARCHIVE_COUNTS))
def test_sample_archive_page_parses_cleanly(name: str) -> None:
    result = parse_archive_page(runpod, name, dated=False)
    assert len(result.offers) == ARCHIVE_COUNTS[name]
    assert all(o.gpu_count == 1 and o.usd_per_instance_hour is None for o in result.offers)


@pytest.mark.parametrize("name", list(ARCHIVE_COUNTS))
def test_sample_archive_carries_every_price_observed_on_its_date(name: str) -> None:
    prices = {
        (o.gpu, o.community, o.price_basis): o.usd_per_gpu_hour
        for o in parse_archive_page(runpod, name, dated=False).offers
        if o.tier == "on_demand"
    }
    observed = archive_observations("runpod", name)
    assert observed
    for row in observed:
        community, basis = TIERS[row["tier"]]
        assert prices[(SLUGS[row["gpu"]], community, basis)] == float(row["usd_per_gpu_hour"]), row


def test_known_prices_and_real_changes_across_archive_dates() -> None:
    def secure_list(name: str, gpu: str) -> float:
        offers = parse_archive_page(runpod, name, dated=False).offers
        return next(
            o.usd_per_gpu_hour
            for o in offers
            if o.gpu == gpu and not o.community and o.tier == "on_demand" and o.price_basis == "list"
        )

    assert [secure_list(n, "h100-sxm") for n in ARCHIVE_COUNTS] == [3.29, 2.99, 3.49, 3.49]
    assert [secure_list(n, "b200") for n in ARCHIVE_COUNTS] == [5.89, 5.89, 6.79, 6.79]
    lowest = parse_archive_page(runpod, "2026-08-30.json", dated=False).offers
    # provider-pages.md: H200 $4.39 on the page (2026-07) vs $3.79 from the API (2026-08-30)
    assert [o.usd_per_gpu_hour for o in lowest if o.gpu == "h200-sxm" and o.price_basis == "lowest_now"] == [
        3.79,
        3.59,
    ]


def test_sample_archive_sources_are_copied_from_the_cited_observations() -> None:
    assert_archive_sources_copied("runpod", ARCHIVE_COUNTS)
    json.loads((ARCHIVE / "2026-10-06.json").read_text())  # the archive's JSON is valid
