"""The parsers on structures seen in real captures other than the ones in ``../shared/realpages``.

Public trackers keep other captures of the same providers (other dates, whole pages where the shared
folder holds an excerpt, other field subsets). Each test here reads the project's own fixture or
inline page written in the structure of one such capture (the capture itself is never copied into
the repository; its repository, path and commit are cited), with rows cut down and, for HTML,
prices invented; the expected offers are written out from reading the fixture.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from test_realpages_html import _nb, assert_contract_offers, offer

from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.registry import parse_page
from parser_support import fixture_dir


def test_nebius_server_rendered_tables_with_head_and_body_sections() -> None:
    """ewyluda/gpu-price-index tests/fixtures/nebius.html @eb72cc64cd20f355b6bd70e33bfa9a6472236f7a:
    each table's header row sits in a ``pc-highlight-table-block__head`` section and its data rows
    in a ``__body`` section. The body's first row (GB300, "Contact us") is data, not the header:
    before the fix the page exited 3 ("GPU table without name and price columns (headers: NVIDIA
    GB300 NVL72 | 112 | 800 | Contact us | Contact us)")."""
    page = (fixture_dir("nebius") / "server_rendered_head_body_sections.html").read_bytes()
    result = parse_page("nebius", page, observed_on=dt.date(2026, 9, 1))
    scheduled = "2026-10-01"
    assert_contract_offers(
        result,
        [
            _nb("b300", "NVIDIA HGX B300", 8, "on_demand", 7.7),
            _nb("b300", "NVIDIA HGX B300", 8, "on_demand", 9.2, effective_from=scheduled),
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "on_demand", 3.75),
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "on_demand", 4.4, effective_from=scheduled),
            _nb("l40s", "NVIDIA L40S with Intel CPU", 1, "on_demand", 1.5, "from"),
            _nb("l40s", "NVIDIA L40S with Intel CPU", 1, "on_demand", 1.5, "from", effective_from=scheduled),
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "spot", 0.75, "from"),  # the preemptible table
            _nb("l40s", "NVIDIA L40S with Intel CPU", 1, "spot", 0.7, "from"),  # "from $0.70**"
        ],
    )
    report = result.report
    assert report.unpriced_rows == 1 and report.rejected == [] and report.unknown_gpus == []


def test_runpod_gpu_types_queried_without_id_or_memory() -> None:
    """Jumbo2020/gpu_prices gpu_prices.json @beb9df28e70a49424f62e9c22c8e0c18ef7e4028 (2025-06-15): the
    bare gpuTypes list of a query asking only displayName, secureCloud, securePrice and
    nodeGroupDatacenters, no ``id``. Each GPU is named by its displayName; secure prices of GPUs with
    ``secureCloud`` true are offers, ``secureCloud`` false ones ("A30" 0.41) are not, 0 is unpriced.
    Before the fix the list exited 3 ("no data.gpuTypes list in the JSON response")."""
    gpu_types = [
        {"displayName": "A100 SXM", "secureCloud": True, "securePrice": 1.74,
         "nodeGroupDatacenters": [{"id": "US-KS-2", "name": "US-KS-2"}]},
        {"displayName": "A30", "secureCloud": False, "securePrice": 0.41, "nodeGroupDatacenters": []},
        {"displayName": "H100 SXM", "secureCloud": True, "securePrice": 2.99, "nodeGroupDatacenters": []},
        {"displayName": "RTX 3070", "secureCloud": False, "securePrice": 0, "nodeGroupDatacenters": []},
    ]  # fmt: skip
    result = parse_page("runpod", json.dumps(gpu_types).encode())
    assert_contract_offers(
        result,
        [
            offer("runpod", "a100-80gb-sxm", "A100 SXM", 1, None, "on_demand", 1.74),
            offer("runpod", "h100-sxm", "H100 SXM", 1, None, "on_demand", 2.99),
        ],
    )
    assert [o.sku for o in result.offers] == ["A100 SXM", "H100 SXM"]
    assert result.report.unpriced_rows == 2 and result.report.rejected == []


def _vast_listing(listing_id: int, dph_total: float, gpu_frac: float, min_bid: float) -> dict:
    """One search listing in the fields of the real response (a subset of its ~90 fields)."""
    return {
        "id": listing_id,
        "ask_contract_id": listing_id,
        "gpu_name": "H100 SXM",
        "gpu_ram": 81559,
        "gpu_total_ram": 81559,
        "gpu_frac": gpu_frac,
        "num_gpus": 1,
        "dph_base": dph_total - 0.002,
        "dph_total": dph_total,
        "min_bid": min_bid,
        "rentable": True,
        "rented": False,
        "verification": "unverified",
    }


def test_vastai_listings_of_one_gpu_on_a_multi_gpu_machine_are_whole_gpus() -> None:
    """getcomputable/gpu-index tests/fixtures/observatory/vast/h100_sxm_asc.json
    @055204adf5e64e62595f97c49b7eb65400149871: an H100 SXM search whose 1-GPU listings carry
    ``gpu_frac`` 1.0, 0.5 and 0.25 (one GPU of a 1-, 2- and 4-GPU machine: "Ratio of GPUs in the
    offer to gpus in the system", Vast's search documentation). Each rents a whole H100; before the
    fix the 0.5 and 0.25 listings were skipped as "fractional-GPU", and the day's median and minimum
    rested on the 1.0 listings alone."""
    listings = [
        _vast_listing(101, 1.50, 1.0, 0.40),
        _vast_listing(102, 1.40, 0.5, 0.30),
        _vast_listing(103, 1.80, 0.25, 1.70),
    ]
    result = parse_page("vastai", json.dumps({"offers": listings}).encode())
    common = {"community": True, "available": True}
    assert_contract_offers(
        result,
        [
            offer("vastai", "h100-sxm", "H100 SXM", 1, 80.0, "on_demand", 1.5, 1.5, **common),  # median
            offer(
                "vastai",
                "h100-sxm",
                "H100 SXM",
                1,
                80.0,
                "on_demand",
                1.4,
                1.4,
                price_basis="lowest_now",
                **common,
            ),
            offer(
                "vastai", "h100-sxm", "H100 SXM", 1, 80.0, "spot", 0.4, 0.4, price_basis="bid_floor", **common
            ),
        ],
    )
    assert [o.capacity for o in result.offers] == [3, 3, 3]


def test_vastai_memory_read_a_little_under_the_card_size_is_the_same_card() -> None:
    """munkhbayarbr/gpu-radar data/offers.json @e5997ad6ddbc8b8097919ff05d1a2574d506fe52 (1,343
    listings) and ewyluda/gpu-price-index tests/fixtures/vast.json
    @1f5b058636bc19d4f114c2142b5548681b8b2c3c: hosts report ``gpu_ram`` 39936 MiB (39 GB) beside
    40960 MiB for the same "A100 SXM4" 40GB card (likewise T4 15/16 GB, Quadro RTX 8000 45/48 GB).
    One card is one group: before the fix the 39 GB listing made a group of its own, and the 40 GB
    group's median and minimum left it out. 10 and 12 GB "RTX 3080" are different cards and stay
    apart (rtx-3080 and rtx-3080-12gb). The bare list without ids, as that tracker stores it."""
    listings = [
        {"gpu_name": "A100 SXM4", "gpu_ram": 40960, "num_gpus": 1, "dph_total": 0.70},
        {"gpu_name": "A100 SXM4", "gpu_ram": 39936, "num_gpus": 1, "dph_total": 0.60},
        {"gpu_name": "A100 SXM4", "gpu_ram": 40960, "num_gpus": 1, "dph_total": 0.80},
        {"gpu_name": "RTX 3080", "gpu_ram": 10240, "num_gpus": 1, "dph_total": 0.10},
        {"gpu_name": "RTX 3080", "gpu_ram": 12288, "num_gpus": 1, "dph_total": 0.12},
    ]
    result = parse_page("vastai", json.dumps(listings).encode())
    common = {"community": True, "available": True}
    assert_contract_offers(
        result,
        [
            offer("vastai", "a100-40gb", "A100 SXM4", 1, 40.0, "on_demand", 0.7, 0.7, **common),  # median
            offer(
                "vastai",
                "a100-40gb",
                "A100 SXM4",
                1,
                40.0,
                "on_demand",
                0.6,
                0.6,
                price_basis="lowest_now",
                **common,
            ),
            offer(
                "vastai",
                "rtx-3080",
                "RTX 3080",
                1,
                10.0,
                "on_demand",
                0.1,
                0.1,
                price_basis="lowest_now",
                **common,
            ),
            offer(
                "vastai",
                "rtx-3080-12gb",
                "RTX 3080",
                1,
                12.0,
                "on_demand",
                0.12,
                0.12,
                price_basis="lowest_now",
                **common,
            ),
        ],
    )
    assert [o.sku for o in result.offers] == [
        "A100 SXM4 40GB x1",
        "A100 SXM4 40GB x1",
        "RTX 3080 10GB x1",
        "RTX 3080 12GB x1",
    ]


def _aws_row(location: str, instance_type: str, price: str) -> dict:
    """One row of a per-region on-demand price document, in the real document's fields."""
    return {
        "rateCode": "AAAAAAAAAAAAAAAA.JRTCKXETXF.6YS6EN2CT7",
        "price": price,
        "Location": location,
        "Instance Family": "GPU instance",
        "Instance Type": instance_type,
        "Operating System": "Linux",
        "License Model": "No License required",
    }


def test_aws_per_region_documents_keyed_by_location() -> None:
    """ewyluda/gpu-price-index tests/fixtures/aws.json @d789fed5946ca8be74259a201f147c75480066b6:
    the per-region on-demand documents (``{"regions": {location: {key: row}}}``) kept in one object
    under their location names ("US East (N. Virginia)", "US East (Ohio)", "US West (Oregon)"). Each
    region's rows are offers of that region; before the fix the whole file exited 3 ("no 'regions'
    price map"), only one region's value on its own parsed."""
    document = {
        location: {
            "regions": {
                location: {
                    f"p5 48xlarge {location} Linux": _aws_row(location, "p5.48xlarge", "55.0400000000"),
                    f"g6e xlarge {location} Linux": _aws_row(location, "g6e.xlarge", "1.8610000000"),
                }
            }
        }
        for location in ("US East (N. Virginia)", "US East (Ohio)")
    }
    result = parse_page("aws", json.dumps(document).encode())
    h100, l40s = ("h100-sxm", "NVIDIA H100 80GB HBM3", 8, 80.0), ("l40s", "NVIDIA L40S", 1, 48.0)
    assert_contract_offers(
        result,
        [
            offer("aws", *h100, "on_demand", 6.88, 55.04, region="us-east-1"),  # 55.04 / 8
            offer("aws", *l40s, "on_demand", 1.861, 1.861, region="us-east-1"),
            offer("aws", *h100, "on_demand", 6.88, 55.04, region="us-east-2"),
            offer("aws", *l40s, "on_demand", 1.861, 1.861, region="us-east-2"),
        ],
    )
    assert result.report.rejected == [] and result.report.unknown_gpus == []


def test_lambda_cloud_api_instance_types() -> None:
    """d0cd/dispatcher internal/cloudvm/pricing_lambda_test.go @ec2b9ae4bc0dd1826b79c11123ebbe483032f384
    keeps "the real /instance-types envelope, trimmed": {"data": {name: {"instance_type": {"name",
    "gpu_description", "price_cents_per_hour", "specs": {"vcpus", "memory_gib", "storage_gib",
    "gpus"}}, "regions_with_capacity_available": [{"name"}]}}}. The price is the instance's, in cents;
    per GPU divides by ``specs.gpus`` (or the name's "gpu_8x_" when a trimmed entry has no specs).
    Before the fix the response exited 3 ("no instance table with Plan and PRICE columns")."""
    response = {
        "data": {
            "gpu_8x_h100_sxm5": {
                "instance_type": {
                    "name": "gpu_8x_h100_sxm5",
                    "description": "8x H100 (80 GB SXM5)",
                    "gpu_description": "H100 (80 GB SXM5)",
                    "price_cents_per_hour": 2392,
                    "specs": {"vcpus": 208, "memory_gib": 1800, "storage_gib": 24780, "gpus": 8},
                },
                "regions_with_capacity_available": [{"name": "us-east-1", "description": "Virginia, USA"}],
            },
            "gpu_1x_a10": {
                "instance_type": {
                    "name": "gpu_1x_a10",
                    "gpu_description": "A10 (24 GB PCIe)",
                    "price_cents_per_hour": 75,
                    "specs": {"vcpus": 30, "memory_gib": 200, "storage_gib": 1400, "gpus": 1},
                },
                "regions_with_capacity_available": [],
            },
            "gpu_8x_a100": {  # trimmed to the name and the price
                "instance_type": {"name": "gpu_8x_a100", "price_cents_per_hour": 1432},
                "regions_with_capacity_available": [{"name": "us-east-1"}],
            },
        }
    }
    result = parse_page("lambda", json.dumps(response).encode())
    assert_contract_offers(
        result,
        [
            offer(
                "lambda", "h100-sxm", "H100 (80 GB SXM5)", 8, 80.0, "on_demand", 2.99, 23.92, available=True
            ),
            offer("lambda", "a10", "A10 (24 GB PCIe)", 1, 24.0, "on_demand", 0.75, 0.75, available=False),
            # Lambda's A100 without a memory size is the 40 GB card; 14.32 / 8
            offer("lambda", "a100-40gb", "gpu_8x_a100", 8, None, "on_demand", 1.79, 14.32, available=True),
        ],
    )
    first = result.offers[0]
    assert (first.sku, first.vcpus, first.ram_gb) == ("gpu_8x_h100_sxm5", 208.0, 1932.7)  # 1800 GiB
    assert result.report.rejected == [] and result.report.unknown_gpus == []


def test_runpod_lowest_price_of_a_query_naming_no_cloud_is_the_community_machine() -> None:
    """getcomputable/gpu-index tests/fixtures/observatory/runpod/gputypes.json
    @5cf4f70300c2b36edc450ddba39c6dbb98b00a3f: ``lowestPrice`` asked without a cloud (no per-cloud
    alias in the response; the other aliases "lp8"/"lp1s" carry only a stockStatus). For a GPU on both
    clouds its uninterruptablePrice is the cheapest machine of either, equal to the communityPrice
    here (B200 5.98 against a secure 6.79): a community machine. Before the fix it was stored as a
    secure machine under the secure list price. A community-only GPU's is community as before;
    MI300X's communityPrice 0.5 with communityCloud false is no offer."""
    gpu_types = [
        {
            "id": "NVIDIA B200",
            "displayName": "B200",
            "memoryInGb": 180,
            "securePrice": 6.79,
            "communityPrice": 5.98,
            "secureCloud": True,
            "communityCloud": True,
            "lowestPrice": {"stockStatus": "Low", "minimumBidPrice": 5.98, "uninterruptablePrice": 5.98},
            "lp8": {"stockStatus": None},
        },
        {
            "id": "AMD Instinct MI300X OAM",
            "displayName": "MI300X",
            "memoryInGb": 192,
            "securePrice": 2.39,
            "communityPrice": 0.5,
            "secureCloud": True,
            "communityCloud": False,
            "lowestPrice": {"stockStatus": None, "minimumBidPrice": None, "uninterruptablePrice": None},
        },
    ]
    result = parse_page("runpod", json.dumps({"data": {"gpuTypes": gpu_types}}).encode())
    b200 = ("b200", "B200", 1, 180.0)
    assert_contract_offers(
        result,
        [
            offer("runpod", *b200, "on_demand", 6.79),
            offer("runpod", *b200, "on_demand", 5.98, community=True),
            offer(
                "runpod", *b200, "on_demand", 5.98, price_basis="lowest_now", community=True, available=True
            ),
            offer("runpod", "mi300x", "MI300X", 1, 192.0, "on_demand", 2.39),
        ],
    )


def test_massedcompute_saved_fragment_running_over_push_chunks() -> None:
    """getcomputable/gpu-index tests/fixtures/observatory/massedcompute/pricing_rsc_excerpt.html
    @d05766b3e644c397de0f6f87b02720278bfa9ee8 (31,566 characters): a fragment cut from inside one
    push string (no opening <script>) that runs on through two more push calls
    (``"])</script><script>self.__next_f.push([1,"``), the last one unterminated. Records are keyed
    "H100 SXM5 (80GB)-mobile-x 8-0" (phone card) and "...-x 8-2" (table row); the 8x H100 NVL card's
    price sits in a later chunk ("$L7d"), its table row carries it; "Request" / "Contact" records
    (8x H100, 8x L40) are unpriced. Before the fix the fragment exited 3: only the complete push
    calls were read, and the first piece, outside any script, was lost.
    tests/fixtures/pages/massedcompute/flight_fragment_over_push_chunks.html is the project's own
    fragment in that structure (rows cut down, prices invented)."""
    page = (fixture_dir("massedcompute") / "flight_fragment_over_push_chunks.html").read_bytes()
    result = parse_page("massedcompute", page)
    nvl = ("h100-nvl", "H100 NVL (94GB) NVLink")
    assert_contract_offers(
        result,
        [
            offer(
                "massedcompute", "h100-sxm", "H100 SXM5 (80GB)", 8, 80.0, "on_demand", 3.1, 24.8
            ),  # 24.80 / 8
            offer("massedcompute", *nvl, 2, 94.0, "on_demand", 2.8, 5.6),  # 5.60 / 2
            offer("massedcompute", "rtx-6000-ada", "RTX 6000 ADA (48GB)", 1, 48.0, "on_demand", 0.75, 0.75),
            offer("massedcompute", *nvl, 8, 94.0, "on_demand", 2.8, 22.4),  # 22.40 / 8
        ],
    )
    assert result.report.unpriced_rows == 3 and result.report.rejected == []


def _lambda_od(
    gpu: str, raw: str, count: int, vram: float, per_gpu: float, per_instance: float | None
) -> dict:
    return offer("lambda", gpu, raw, count, vram, "on_demand", per_gpu, per_instance)


def test_lambda_2023_gpus_column_priced_per_instance_and_clusters_priced_per_h100() -> None:
    """henryzhangpku/gpu-price-index tests/fixtures/backfill/lambda_20230909194011.html
    @c4ae7ff99961a566d842c1044b5db2dee1f48fd1 (lambdalabs.com/service/gpu-cloud, 2023-09-09): the
    on-demand table's plan column is headed "GPUs" ("8x NVIDIA H100 SXM New") and priced per
    instance ("$20.72 / hr"): before the fix the whole table was skipped (no plan column). The
    Reserved Cloud Cluster table prices "$1.89/H100/hour", per GPU: before the fix it was divided by
    8 again. Own page in that structure: tests/fixtures/pages/lambda/gpu_cloud_2023.html."""
    result = parse_page("lambda", (fixture_dir("lambda") / "gpu_cloud_2023.html").read_bytes())
    contract = {"price_basis": "contract"}
    assert_contract_offers(
        result,
        [
            _lambda_od("h100-pcie", "NVIDIA H100 PCIe", 1, 80.0, 2.1, 2.1),  # the "New" tag is not the name
            _lambda_od("a100-40gb", "NVIDIA A100", 8, 40.0, 1.2, 9.6),  # 9.60 / 8
            _lambda_od("a100-80gb-sxm", "NVIDIA A100", 8, 80.0, 1.6, 12.8),  # 12.80 / 8
            offer(
                "lambda",
                "h100-sxm",
                "NVIDIA H100",
                8,
                80.0,
                "reserved",
                1.95,
                commitment_months=36,
                **contract,
            ),
            offer(
                "lambda", "h100-sxm", "NVIDIA H100", 8, 80.0, "reserved", 4.5, commitment_months=3, **contract
            ),
        ],
    )
    assert result.report.parse_strategy == "structured" and result.report.rejected == []


def test_lambda_2024_excerpt_of_rows_without_their_table_or_header() -> None:
    """henryzhangpku/gpu-price-index tests/fixtures/backfill/lambda_20241103180910.html
    @c4ae7ff99961a566d842c1044b5db2dee1f48fd1 (lambdalabs.com/service/gpu-cloud, 2024-11-03), kept
    cut between 'PRICE/GPU/HR' and 'plus applicable sales tax': 17 rows with no <table> around them
    and no header row. Columns are read from what the cells hold (plan "On-demand 8x ...", "80 GB",
    vCPUs, RAM, storage, "$2.99 / GPU / hr"). Before the fix the fallback extractor read it without
    the memory column: the 8x A100 SXM 80 GB row became the 40 GB card and the 40 GB row a dropped
    duplicate, and "Tesla V100" 16 GB became the 32 GB card. Own excerpt in that structure:
    tests/fixtures/pages/lambda/rows_without_table_2024.html."""
    result = parse_page("lambda", (fixture_dir("lambda") / "rows_without_table_2024.html").read_bytes())
    assert_contract_offers(
        result,
        [
            _lambda_od("h100-sxm", "NVIDIA H100 SXM", 8, 80.0, 2.89, None),
            _lambda_od("a100-80gb-sxm", "NVIDIA A100 SXM", 8, 80.0, 1.69, None),
            _lambda_od("a100-40gb", "NVIDIA A100 SXM", 8, 40.0, 1.19, None),
            _lambda_od("v100-16gb", "NVIDIA Tesla V100", 8, 16.0, 0.5, None),
        ],
    )
    report = result.report
    assert (report.parse_strategy, report.unpriced_rows, report.rejected) == (
        "structured",
        1,
        [],
    )  # CONTACT SALES


def test_runpod_pricing_page_read_from_its_json_ld_products() -> None:
    """henryzhangpku/gpu-price-index tests/fixtures/backfill/runpod_20260810082317.html
    @2017707f31876d55e2d1853aa1f64d9a815f71ab (runpod.io/pricing, 2026-08-10), kept cut to its
    application/ld+json block: one schema.org Product per GPU ("H100 SXM GPU on Runpod") whose
    AggregateOffer lists "Community Cloud" and "Secure Cloud" per-hour on-demand rates (per GPU, as
    every Runpod price). Before the fix the page exited 3 ("no .gpu-pricing-row elements"). Own page
    in that structure: tests/fixtures/pages/runpod/json_ld_products_2026_08.html."""
    page = (fixture_dir("runpod") / "json_ld_products_2026_08.html").read_bytes()
    result = parse_page("runpod", page)
    assert_contract_offers(
        result,
        [
            offer("runpod", "h100-sxm", "H100 SXM", 1, None, "on_demand", 2.59, community=True),
            offer("runpod", "h100-sxm", "H100 SXM", 1, None, "on_demand", 2.89),
            offer("runpod", "l4", "L4", 1, None, "on_demand", 0.42, community=True),
            offer(
                "runpod", "l4", "L4", 1, None, "on_demand", 0.37
            ),  # secure under community, as the page says
        ],
    )
    report = result.report
    assert (report.rows_seen, report.unpriced_rows, report.rejected) == (2, 0, [])


def test_runpod_2023_next_data_gpu_types_under_another_key() -> None:
    """henryzhangpku/gpu-price-index tests/fixtures/backfill/runpod_20230929070808.html
    @f77f8dffafbcf4201438dac6980d37650227a0a2 (runpod.io/gpu-instance/pricing, 2023-09-29): the
    gpuTypes sit in __NEXT_DATA__ under ``props.pageProps.data`` ({"__typename": "GpuType", ...}),
    not under a "gpuTypes" key: before the fix the page exited 3. Its "A100 80GB" is, by its id, the
    "NVIDIA A100 80GB PCIe" card (the id is read first: before, the SXM card). Own page in that
    structure: tests/fixtures/pages/runpod/next_data_2023.html."""
    result = parse_page("runpod", (fixture_dir("runpod") / "next_data_2023.html").read_bytes())
    a100, l40, v100 = (
        ("a100-80gb-pcie", "A100 80GB", 1, 80.0),
        ("l40", "L40", 1, 48.0),
        ("v100-16gb", "V100 FHHL", 1, 16.0),
    )
    now = {"price_basis": "lowest_now", "available": True, "community": True}
    assert_contract_offers(
        result,
        [
            offer("runpod", *a100, "on_demand", 1.89),
            offer("runpod", *a100, "on_demand", 1.59, community=True),
            offer("runpod", *a100, "spot", 0.79, community=True),
            offer("runpod", *a100, "on_demand", 1.59, **now),  # under the secure price: a community machine
            offer(
                "runpod", *l40, "on_demand", 1.04
            ),  # communityPrice 0.5 with communityCloud false: no offer
            offer("runpod", *l40, "spot", 0.59),
            offer("runpod", *l40, "reserved", 0.98, commitment_months=1),
            offer("runpod", *l40, "reserved", 0.92, commitment_months=3),
            offer("runpod", *l40, "reserved", 0.87, commitment_months=6),
            offer("runpod", *v100, "on_demand", 0.26, community=True),
            offer("runpod", *v100, "spot", 0.17, community=True),
            offer("runpod", *v100, "on_demand", 0.26, **now),  # community-only
        ],
    )
    assert result.report.rejected == [] and result.report.unknown_gpus == []


def _crusoe(gpu: str, raw: str, vram: float, tier: str, price: float, months: int | None = None) -> dict:
    return offer("crusoe", gpu, raw, 1, vram, tier, price, commitment_months=months)


def test_crusoe_2025_table_titled_gpu_pricing_with_reserved_terms() -> None:
    """henryzhangpku/gpu-price-index tests/fixtures/backfill/crusoe_20250521220413.html
    @c4ae7ff99961a566d842c1044b5db2dee1f48fd1 (crusoe.ai/cloud/pricing, 2025-05-21): a <table> whose
    GPU column is headed by the title "GPU Pricing", with On-Demand, Current Spot and 6-month / 1-year
    / 3-year reserved columns priced per GPU-hour. Before the fix the table was not read (no name
    column) and the card reader made one offer of "GPU Pricing 141GB SXM OAM PCIe" at the first
    price, rejecting the rest. Own page in that structure: tests/fixtures/pages/crusoe/table_2025.html."""
    result = parse_page("crusoe", (fixture_dir("crusoe") / "table_2025.html").read_bytes())
    h100, mi300x = ("h100-sxm", "NVIDIA H100 80GB SXM", 80.0), ("mi300x", "AMD MI300X 192GB OAM", 192.0)
    assert_contract_offers(
        result,
        [
            _crusoe(*h100, "on_demand", 3.8),  # Current Spot: Contact Sales
            _crusoe(*h100, "reserved", 3.05, 6),
            _crusoe(*h100, "reserved", 2.85, 12),
            _crusoe(*h100, "reserved", 2.5, 36),
            _crusoe(*mi300x, "on_demand", 3.35),
            _crusoe(*mi300x, "spot", 0.9),
            _crusoe(*mi300x, "reserved", 2.7, 6),
            _crusoe(*mi300x, "reserved", 2.5, 12),
            _crusoe(*mi300x, "reserved", 2.2, 36),
        ],
    )
    assert result.report.rejected == [] and result.report.unknown_gpus == []


def test_crusoe_2026_page_reads_gpu_instances_not_its_inference_endpoints() -> None:
    """ewyluda/gpu-price-index tests/fixtures/crusoe.html @078a7891 (crusoe.ai/cloud/pricing, 2026):
    below "GPU instances pricing" (GPU model | On-demand | Current spot) the same card grid prices
    "Self-Serve Deployments pricing" (GPU type | Price per hour): dedicated inference endpoints.
    Before the fix those cards were read as on-demand instances: B200 and MI355X offers at the
    endpoints' prices where the instance grid says "Contact sales", and the H100/H200 endpoint
    prices rejected only as duplicates of the instance rows that came first. Own page in that
    structure: tests/fixtures/pages/crusoe/sections_2026.html."""
    result = parse_page("crusoe", (fixture_dir("crusoe") / "sections_2026.html").read_bytes())
    h100 = ("h100-sxm", "NVIDIA H100 80GB HGX", 80.0)
    assert_contract_offers(
        result,
        [
            _crusoe("h200-sxm", "NVIDIA H200 141GB HGX", 141.0, "on_demand", 4.11),
            _crusoe(*h100, "on_demand", 3.72),
            _crusoe(*h100, "spot", 1.55),
            _crusoe("mi300x", "AMD MI300X 192GB", 192.0, "on_demand", 3.2),
        ],
    )
    assert result.report.rejected == [] and result.report.parse_strategy == "structured"
    assert "section 'Self-Serve Deployments pricing' skipped: not GPU-instance prices" in result.report.notes


def test_crusoe_endpoints_alone_are_no_offers_for_either_reader() -> None:
    """The deployments section alone (tests/fixtures/pages/crusoe/deployments_only.html): the
    structured reader finds no instance grid, and the fallback extractor, which reads any GPU name
    with a price after it, must not read the endpoints either: exit 3, no offers."""
    page = (fixture_dir("crusoe") / "deployments_only.html").read_bytes()
    with pytest.raises(StructureMissing):
        parse_page("crusoe", page)


def test_nebius_2024_rows_naming_the_instance_and_its_gpu_count() -> None:
    """henryzhangpku/gpu-price-index tests/fixtures/backfill/nebius_20241115043809.html
    @c4ae7ff99961a566d842c1044b5db2dee1f48fd1 (nebius.com/prices, 2024-11-15): a role="table" grid
    whose rows name the instance with its count ("8 × H200 SXM", 1128 GB vRAM, $28.00 "On demand"
    beside "1 × H200 SXM", 141, $3.50): the row is the whole instance. Before the fix the 8-GPU row
    was stored at $28.00 per GPU-hour with 1128 GB per GPU. The "Reserve" column states no term and
    is not an offer. Own page in that structure: tests/fixtures/pages/nebius/instance_rows_2024.html."""
    page = (fixture_dir("nebius") / "instance_rows_2024.html").read_bytes()
    result = parse_page("nebius", page, observed_on=dt.date(2024, 11, 15))
    assert_contract_offers(
        result,
        [
            offer("nebius", "h100-sxm", "1 × H100 SXM", 1, 80.0, "on_demand", 2.9),
            offer(
                "nebius", "h100-sxm", "8 × H100 SXM", 8, 80.0, "on_demand", 2.9, 23.2
            ),  # 23.20 / 8; 640 GB / 8
            offer("nebius", "l40s", "1 × L40s PCIe", 1, 48.0, "on_demand", 1.5),
        ],
    )
    assert result.offers[1].ram_gb == 1600.0 and result.offers[1].vcpus == 128.0  # the instance's, as written
