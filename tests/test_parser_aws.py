"""AWS parser: per-region on-demand files, the spot feed and the advisor's buckets, combined."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.providers import aws
from gpuprice.scrapers.registry import parse_page
from parser_support import (
    archive_page_names,
    assert_archive_sources_copied,
    assert_offers,
    assert_registered,
    fixture_dir,
    full_offer,
    parse_archive_page,
    report_of,
)

FIXTURES = fixture_dir("aws")
P5 = dict(gpu="h100-sxm", gpu_raw="NVIDIA H100 80GB HBM3", gpu_count=8, vram_gb=80.0, sku="p5.48xlarge")
P5EN = dict(
    gpu="h200-sxm", gpu_raw="NVIDIA H200 141GB HBM3e", gpu_count=8, vram_gb=141.0, sku="p5en.48xlarge"
)


def offer(**fields: object) -> dict:
    return full_offer("aws", **fields)


def test_on_demand_and_spot_per_region_with_the_interruption_bucket() -> None:
    result = aws.parse((FIXTURES / "combined.json").read_bytes())
    assert_offers(
        result,
        [
            offer(**P5, usd_per_gpu_hour=6.88, usd_per_instance_hour=55.04, region="us-east-1"),
            # A10G is AWS's own A10 variant (G5): its own slug a10g, never a10
            offer(
                gpu="a10g",
                gpu_raw="NVIDIA A10G",
                gpu_count=1,
                vram_gb=24.0,
                usd_per_gpu_hour=1.006,
                usd_per_instance_hour=1.006,
                region="us-east-1",
                sku="g5.xlarge",
            ),
            # p9.96xlarge, a GPU family the CSV does not list: quarantined (see the report)
            offer(**P5EN, usd_per_gpu_hour=8.4658, usd_per_instance_hour=67.7267, region="eu-north-1"),
            offer(
                **P5,
                tier="spot",
                usd_per_gpu_hour=2.752,
                usd_per_instance_hour=22.016,
                region="us-east-1",
                interruption_bucket=">20%",
            ),
            # no advisor entry for p5en in eu-north-1: no bucket
            offer(
                **P5EN,
                tier="spot",
                usd_per_gpu_hour=3.3863,
                usd_per_instance_hour=27.0907,
                region="eu-north-1",
            ),
        ],
    )
    assert report_of(result, "aws") == {
        "rows_seen": 9,
        "offers": 5,
        "unpriced_rows": 2,  # p5e at $0 (capacity blocks only) and g6e spot "N/A*"
        "rejected": [
            # no known GPU count: the whole-instance $300/h is never stored as one GPU's price
            {
                "raw": "p9.96xlarge | us-east-1 | on-demand | price='300.0000000000'",
                "reason": "p9.96xlarge is not in the instance-to-GPU table (scrapers/data/instance_types.csv): "
                "GPU count unknown, $300.0 per instance-hour not priced per GPU",
            },
            {
                "raw": "p4d.24xlarge | us-east-1 | on-demand | price='30.0000000000'",
                "reason": "operating system Windows, not Linux",
            },
        ],
        "unknown_gpus": ["p9.96xlarge"],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [
            "part missing: https://b0.p.awsstatic.com/.../Asia%20Pacific%20%28Tokyo%29/Linux/index.json: "
            "HTTP 503 Service Unavailable after 4 attempts"
        ],
    }


def test_price_list_offer_file_plain_linux_on_demand_and_no_upfront_reserved() -> None:
    """The Price List API's offer file (products + terms), in the structure opencost keeps a real
    cut of (opencost/opencost pkg/cloud/aws/testdata/pricing-us-east-1.json @9dcbc978: p4d.24xlarge
    with its $0 Capacity Block twin); before, such a document exited 3. Own fixture, prices
    invented: the plain Linux product is priced, the Windows, Capacity Block and dedicated ones are
    other products; reserved no-upfront standard terms are offers, upfront and convertible ones are
    not; a term taking effect after the observation date is scheduled."""
    page = (FIXTURES / "price_list_offer_file.json").read_bytes()
    result = aws.parse(page, observed_on=dt.date(2026, 6, 2))
    a10g = dict(gpu="a10g", gpu_raw="NVIDIA A10G", gpu_count=1, vram_gb=24.0, sku="g5.xlarge")
    assert_offers(
        result,
        [
            offer(**P5, usd_per_gpu_hour=6.75, usd_per_instance_hour=54.0, region="us-east-1"),
            offer(**P5, tier="reserved", commitment_months=12, usd_per_gpu_hour=4.5, usd_per_instance_hour=36.0,
                  region="us-east-1"),
            offer(**P5, tier="reserved", commitment_months=36, usd_per_gpu_hour=3.0, usd_per_instance_hour=24.0,
                  region="us-east-1"),
            offer(**a10g, usd_per_gpu_hour=1.0, usd_per_instance_hour=1.0, region="us-east-1",
                  effective_from="2027-01-01"),
        ],
    )  # fmt: skip
    report = report_of(result, "aws")
    assert report["unknown_gpus"] == ["p9.96xlarge"] and len(report["rejected"]) == 1
    assert report["notes"] == [
        f"Price List: 1 GPU-family products or terms skipped, {why}"
        for why in (
            "not the plain Linux product (operatingSystem Windows)",
            "not the plain Linux product (operation RunInstances:CB)",
            "not the plain Linux product (tenancy Dedicated)",
            "reserved all upfront (an upfront fee, not an hourly price)",
            "reserved convertible offering class",
            "reserved partial upfront (an upfront fee, not an hourly price)",
        )
    ]


def test_price_list_get_products_page_reads_as_the_offer_file() -> None:
    """``aws pricing get-products`` returns each product with its terms as a JSON string in
    ``PriceList``: the same products read the same (own fixture, from the offer file above)."""
    get_products = aws.parse((FIXTURES / "price_list_get_products.json").read_bytes(), dt.date(2026, 6, 2))
    offer_file = aws.parse((FIXTURES / "price_list_offer_file.json").read_bytes(), dt.date(2026, 6, 2))
    assert [o.contract_dict() for o in get_products.offers] == [o.contract_dict() for o in offer_file.offers]
    assert parse_page("aws", (FIXTURES / "price_list_get_products.json").read_bytes()).offers


def test_a_document_without_price_maps_is_refused() -> None:
    with pytest.raises(StructureMissing) as info:
        aws.parse(b'{"format": "gpuprice-combined/1", "pages": [{"url": "u", "error": "HTTP 503"}]}')
    assert info.value.what == (
        "no 'regions' price map (on-demand), Price List 'products'/'PriceList' or spot 'config.regions' feed"
    )


def test_live_requests_are_one_file_per_region_then_the_optional_spot_feeds() -> None:
    requests = aws.live_requests()
    assert all(r.combine and r.kind == "json" and not r.fallback for r in requests)
    assert [r.optional for r in requests] == [False] + [True] * (len(aws.REGIONS) - 1) + [True, True]
    assert requests[0].url == (
        "https://b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/ec2/USD/current/"
        "ec2-ondemand-without-sec-sel/US%20East%20%28N.%20Virginia%29/Linux/index.json"
    )
    assert requests[-2].url == "https://website.spot.ec2.aws.a2z.com/spot.json"
    assert requests[-1].url == "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"


def test_sample_archive_keeps_the_region_of_every_price() -> None:
    names = archive_page_names("aws", (".json",))
    assert names == ["2026-01-21.json"]
    result = parse_archive_page(aws, names[0], dated=True)
    by_region = {(o.sku, o.region): o.usd_per_gpu_hour for o in result.offers}
    assert by_region[("p5.48xlarge", "us-east-1")] == 6.88
    assert by_region[("p5.48xlarge", "eu-north-1")] == 7.3616
    assert len(result.offers) == 12 and {o.tier for o in result.offers} == {"on_demand"}
    assert_archive_sources_copied("aws", names)


def test_registered() -> None:
    assert_registered(aws, "aws", "aws/4", "https://aws.amazon.com/ec2/pricing/on-demand/")
