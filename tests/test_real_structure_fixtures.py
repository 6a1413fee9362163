"""The JSON parsers on the project's own fixtures written in the structures real responses have.

Each fixture copies the layout of a real capture kept by a public project (field names, nesting,
compound keys, envelopes or their absence) with rows of our own, so a fresh clone without
``../shared/realpages`` tests the same paths (tests/test_realpages_json_apis.py reads the captures
themselves). Layouts, by fixture (tests/fixtures/pages/<provider>/real_structure_*.json):

- runpod subset_envelope: ewyluda/gpu-price-index ``tests/fixtures/runpod.json`` @d789fed5, the
  GraphQL envelope with five fields per gpuType and no cloud flags;
- runpod bare_list: Jumbo2020/gpu_prices ``gpu_prices.json`` @13a47f94 (2025-06-21), the gpuTypes
  list without its GraphQL envelope; names of ewyluda/gpu-price-index ``tests/fixtures/runpod.json``
  @d789fed5 (B300 SXM6 AC, a MIG slice of an RTX PRO 6000);
- aws us_east: ewyluda/gpu-price-index ``tests/fixtures/aws.json`` @d789fed5 (about 2026-09), one
  region's meteredUnitMap with compound keys;
- azure page: mrmonroe90/compute-price-tracker ``tests/fixtures/azure_retail_eastus_nd_2026-07-27.json``
  @bacf91dd (2026-07-27); azure bare_items: ewyluda/gpu-price-index ``tests/fixtures/azure.json``
  @1f5b0586, the items alone with seven fields;
- oci products: ewyluda/gpu-price-index ``tests/fixtures/oracle.json`` @1e77fb70 (lastUpdated
  2026-10-01), with its name variants, Cloud@Customer, commit and per-day items;
- vastai offers: munkhbayarbr/gpu-radar ``data/offers.json`` @3c84bca0 (2026-08-17),
  ``{"updated", "offers"}`` with that project's field subset; vastai bare_list:
  ewyluda/gpu-price-index ``tests/fixtures/vast.json`` @1f5b0586, a bare list of four fields.
"""

from __future__ import annotations

import pytest

from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.providers import aws, azure, oci, runpod, vastai
from gpuprice.scrapers.registry import parse_page
from parser_support import assert_offers, fixture_dir, full_offer, report_of


def page(provider: str, name: str) -> bytes:
    return (fixture_dir(provider) / f"real_structure_{name}.json").read_bytes()


def test_runpod_bare_gpu_types_list() -> None:
    result = runpod.parse(page("runpod", "bare_list"))
    h200 = dict(gpu="h200-sxm", gpu_raw="H200 SXM", gpu_count=1, vram_gb=141.0, sku="NVIDIA H200")
    b300 = dict(gpu="b300", gpu_raw="B300", gpu_count=1, vram_gb=288.0, sku="NVIDIA B300 SXM6 AC")
    assert_offers(
        result,
        [
            full_offer("runpod", **h200, usd_per_gpu_hour=3.59),
            full_offer("runpod", **h200, community=True, usd_per_gpu_hour=3.29),
            full_offer("runpod", **h200, tier="spot", usd_per_gpu_hour=2.15),
            full_offer("runpod", **h200, tier="spot", community=True, usd_per_gpu_hour=1.95),
            full_offer("runpod", **h200, tier="reserved", commitment_months=1, usd_per_gpu_hour=3.5),
            full_offer("runpod", **h200, tier="reserved", commitment_months=3, usd_per_gpu_hour=3.41),
            full_offer("runpod", **h200, tier="reserved", commitment_months=6, usd_per_gpu_hour=3.2),
            full_offer("runpod", **b300, usd_per_gpu_hour=6.99),
            # one week is recorded as 0 months
            full_offer("runpod", **b300, tier="reserved", commitment_months=0, usd_per_gpu_hour=6.8),
            full_offer("runpod", **b300, tier="reserved", commitment_months=3, usd_per_gpu_hour=6.5),
            full_offer("runpod", **b300, tier="reserved", commitment_months=6, usd_per_gpu_hour=6.2),
            full_offer(
                "runpod",
                gpu="rtx-4090",
                gpu_raw="RTX 4090",
                gpu_count=1,
                vram_gb=24.0,
                community=True,
                usd_per_gpu_hour=0.31,
                sku="NVIDIA GeForce RTX 4090",
            ),
            full_offer(
                "runpod",
                gpu="rtx-4090",
                gpu_raw="RTX 4090",
                gpu_count=1,
                vram_gb=24.0,
                tier="spot",
                community=True,
                usd_per_gpu_hour=0.18,
                sku="NVIDIA GeForce RTX 4090",
            ),
            # a MIG slice is not the card: unknown, never rtx-pro-6000
            full_offer(
                "runpod",
                gpu="unknown",
                gpu_raw="PRO 6000 MIG 48GB",
                gpu_count=1,
                vram_gb=48.0,
                usd_per_gpu_hour=0.95,
                sku="NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 2g.48gb",
            ),
        ],
    )
    assert report_of(result, "runpod") == {
        "rows_seen": 5,
        "offers": 14,
        "unpriced_rows": 1,  # the "unknown" placeholder
        "rejected": [],
        "unknown_gpus": ["PRO 6000 MIG 48GB"],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [
            "gpuTypes list without the GraphQL data envelope",
            "NVIDIA B300 SXM6 AC: communityPrice ignored, communityCloud is false",
            "NVIDIA GeForce RTX 4090: securePrice ignored, secureCloud is false",
            "NVIDIA GeForce RTX 4090: secureSpotPrice ignored, secureCloud is false",
            "NVIDIA GeForce RTX 4090: threeMonthPrice ignored, secureCloud is false",
            "NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 2g.48gb: communityPrice ignored, "
            "communityCloud is false",
        ],
    }


def test_aws_region_document_with_an_unlisted_gpu_family() -> None:
    result = aws.parse(page("aws", "us_east"))
    common = dict(region="us-east-1")
    assert_offers(
        result,
        [
            # 60.10 / 8
            full_offer(
                "aws",
                **common,
                gpu="h200-sxm",
                gpu_raw="NVIDIA H200 141GB HBM3e",
                gpu_count=8,
                vram_gb=141.0,
                usd_per_gpu_hour=7.5125,
                usd_per_instance_hour=60.1,
                sku="p5e.48xlarge",
            ),
            # 140 / 8
            full_offer(
                "aws",
                **common,
                gpu="b300",
                gpu_raw="NVIDIA B300",
                gpu_count=8,
                usd_per_gpu_hour=17.5,
                usd_per_instance_hour=140.0,
                sku="p6-b300.48xlarge",
            ),
            # 4.60 / 4 L4s
            full_offer(
                "aws",
                **common,
                gpu="l4",
                gpu_raw="NVIDIA L4",
                gpu_count=4,
                vram_gb=24.0,
                usd_per_gpu_hour=1.15,
                usd_per_instance_hour=4.6,
                sku="g6.12xlarge",
            ),
        ],
    )
    assert report_of(result, "aws") == {
        "rows_seen": 5,  # m7i.2xlarge is not a GPU family
        "offers": 3,
        "unpriced_rows": 1,  # p6e-gb200 at $0 (sold as UltraServer capacity only)
        "rejected": [
            {
                "raw": "p7-x900.48xlarge | us-east-1 | on-demand | price='120.0000000000'",
                "reason": "p7-x900.48xlarge is not in the instance-to-GPU table (scrapers/data/instance_types.csv): "
                "GPU count unknown, $120.0 per instance-hour not priced per GPU",
            }
        ],
        "unknown_gpus": ["p7-x900.48xlarge"],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [],
    }


def test_azure_api_page_in_the_real_layout() -> None:
    result = azure.parse(page("azure", "page"))
    h200 = dict(
        gpu="h200-sxm",
        gpu_raw="NVIDIA H200 141GB",
        gpu_count=8,
        vram_gb=141.0,
        region="westus3",
        sku="Standard_ND96isr_H200_v5",
    )
    assert_offers(
        result,
        [
            full_offer("azure", **h200, usd_per_gpu_hour=13.78, usd_per_instance_hour=110.24),  # / 8
            full_offer("azure", **h200, tier="spot", usd_per_gpu_hour=3.445, usd_per_instance_hour=27.56),
            # Windows, Low Priority and DevTest meters: no offers. 613,200 / 8,760 h = 70.00; / 8
            full_offer(
                "azure",
                **h200,
                tier="reserved",
                commitment_months=12,
                usd_per_gpu_hour=8.75,
                usd_per_instance_hour=70.0,
            ),
            # ND GB200 v6: 4 GPUs per VM, 108 / 4
            full_offer(
                "azure",
                gpu="gb200",
                gpu_raw="NVIDIA GB200",
                gpu_count=4,
                usd_per_gpu_hour=27.0,
                usd_per_instance_hour=108.0,
                region="westus3",
                sku="Standard_ND128isr_NDR_GB200_v6",
            ),
        ],
    )
    assert report_of(result, "azure") == {
        "rows_seen": 8,
        "offers": 4,
        "unpriced_rows": 0,
        "rejected": [
            {
                "raw": "Standard_ND96is_H200_v5 | westus3 | ND96is H200 v5 | Consumption | 104.0",
                "reason": "Standard_ND96is_H200_v5 is not in the instance-to-GPU table "
                "(scrapers/data/instance_types.csv): GPU count unknown, $104.0 per VM-hour not priced per GPU",
            }
        ],
        "unknown_gpus": ["Standard_ND96is_H200_v5"],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [],
    }


def test_azure_bare_item_list() -> None:
    result = azure.parse(page("azure", "bare_items"))
    assert_offers(
        result,
        [
            full_offer(
                "azure",
                gpu="h100-nvl",
                gpu_raw="NVIDIA H100 NVL 94GB",
                gpu_count=1,
                vram_gb=94.0,
                usd_per_gpu_hour=7.2,
                usd_per_instance_hour=7.2,
                region="uksouth",
                sku="Standard_NC40ads_H100_v5",
            ),
            # the NC80adis spot meter is Windows: no offer. "NCads A100 v4 Series Linux": 1.50 / 2
            full_offer(
                "azure",
                gpu="a100-80gb-pcie",
                gpu_raw="NVIDIA A100 80GB PCIe",
                gpu_count=2,
                vram_gb=80.0,
                tier="spot",
                usd_per_gpu_hour=0.75,
                usd_per_instance_hour=1.5,
                region="westeurope",
                sku="Standard_NC48ads_A100_v4",
            ),
        ],
    )
    assert result.report.notes == ["price items without the API response's 'Items' envelope"]
    assert (result.report.rows_seen, result.report.rejected) == (3, [])


def test_oci_products_list_in_the_real_layout() -> None:
    result = oci.parse(page("oci", "products"))
    assert_offers(
        result,
        [
            # "Oracle Cloud Infrastructure - Compute - GPU - H200": a part number the table does not
            # know, matched by name; per GPU as listed, the BM.GPU.H200.8 shape holds 8
            full_offer(
                "oci",
                gpu="h200-sxm",
                gpu_raw="NVIDIA H200 141GB",
                gpu_count=8,
                vram_gb=141.0,
                usd_per_gpu_hour=9.5,
                usd_per_instance_hour=76.0,
                sku="BM.GPU.H200.8",
            ),
            full_offer(  # "OCI- " prefix
                "oci",
                gpu="b300",
                gpu_raw="NVIDIA B300",
                gpu_count=8,
                vram_gb=288.0,
                usd_per_gpu_hour=14.5,
                usd_per_instance_hour=116.0,
                sku="BM.GPU.B300.8",
            ),
            full_offer(  # "Compute  - GPU - L40S", two spaces
                "oci",
                gpu="l40s",
                gpu_raw="NVIDIA L40S",
                gpu_count=4,
                vram_gb=48.0,
                usd_per_gpu_hour=3.25,
                usd_per_instance_hour=13.0,
                sku="BM.GPU.L40S.4",
            ),
            full_offer(  # matched by part number B112140; GB300 is not in the GPU catalog
                "oci",
                gpu="unknown",
                gpu_raw="NVIDIA GB300",
                gpu_count=4,
                usd_per_gpu_hour=17.5,
                usd_per_instance_hour=70.0,
                sku="BM.GPU.GB300.4",
            ),
        ],
    )
    assert report_of(result, "oci") == {
        "rows_seen": 9,
        "offers": 4,
        "unpriced_rows": 0,
        "rejected": [
            {
                "raw": 'B900008 | OCI - Compute - GPU - Z7 | [{"currencyCode": "USD", "prices": '
                '[{"model": "PAY_AS_YOU_GO", "value": 2.5}]}]',
                "reason": "OCI - Compute - GPU - Z7 is not in the shape table (scrapers/data/instance_types.csv): "
                "GPU and shape unknown, $2.5 per GPU-hour not stored as an offer",
            }
        ],
        "unknown_gpus": ["OCI - Compute - GPU - Z7", "NVIDIA GB300"],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [
            "commit items skipped (prices under a usage commitment, not on-demand): B900001",
            # the $0.55 "Resource Commit" and the $8.50 on-premises H100
            "Cloud@Customer items skipped (on-premises racks under a commitment, not rentable on demand): "
            "B900005, B900006",
            "GPU items not priced per GPU-hour skipped: B900007",
        ],
    }


def _vast(
    name: str,
    gpu: str,
    count: int,
    vram: float,
    tier: str,
    price: float,
    listings: int,
    basis: str,
    reading: float | None = None,
) -> dict:
    """``vram`` is the card's memory as sold; ``reading`` the listings' gpu_ram in GiB that the SKU
    names when it differs (vastai/5)."""
    return full_offer(
        "vastai",
        gpu=gpu,
        gpu_raw=name,
        gpu_count=count,
        vram_gb=vram,
        tier=tier,
        community=True,
        usd_per_gpu_hour=price,
        usd_per_instance_hour=round(price * count, 4),
        available=True,
        sku=f"{name} {reading or vram:g}GB x{count}",
        price_basis=basis,
        capacity=listings,
    )


def test_vast_offers_in_the_tracker_layout() -> None:
    result = vastai.parse(page("vastai", "offers"))
    assert_offers(
        result,
        [
            # asks 1.90, 2.30, 2.10, 2.70 (listing 9001 repeated counts once): median 2.20
            _vast("H100 SXM", "h100-sxm", 1, 80.0, "on_demand", 2.2, 4, "list"),
            _vast("H100 SXM", "h100-sxm", 1, 80.0, "on_demand", 1.9, 4, "lowest_now"),
            # bid floors 1.20, 1.40, 1.00: the median floor 1.20, not a list price
            _vast("H100 SXM", "h100-sxm", 1, 80.0, "spot", 1.2, 3, "bid_floor"),
            # one 8-GPU listing: 17.60 / 8 = 2.20 per GPU, the cheapest now; no median
            _vast("H100 SXM", "h100-sxm", 8, 80.0, "on_demand", 2.2, 1, "lowest_now"),
            _vast("RTX 4090", "rtx-4090", 1, 24.0, "on_demand", 0.31, 1, "lowest_now"),
            _vast("RTX 4090", "rtx-4090", 2, 24.0, "on_demand", 0.35, 1, "lowest_now"),
        ],
    )
    assert report_of(result, "vastai") == {
        "rows_seen": 7,
        "offers": 6,
        "unpriced_rows": 0,
        "rejected": [],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [
            "statistics rest on 7 listings: 7 on-demand asks and 6 bid floors of 2 GPU names",
            "no median published with fewer than 3 listings: H100 SXM 80GB x8 on_demand (1), H100 SXM 80GB x8 spot (1), "
            "RTX 4090 24GB x1 on_demand (1), RTX 4090 24GB x1 spot (1), RTX 4090 24GB x2 on_demand (1), "
            "RTX 4090 24GB x2 spot (1)",
        ],
    }


def test_vast_bare_listing_list() -> None:
    result = vastai.parse(page("vastai", "bare_list"))
    # H200 x1 asks 2.90, 3.10, 3.30: median 3.10; x8: 28.00 / 8 = 3.50; gpu_ram 143771 MiB = 140 GiB,
    # the H200's 141 GB as sold less what the driver reserves: vram_gb 141 (vastai/5), SKU "H200 140GB"
    assert_offers(
        result,
        [
            _vast("H200", "h200-sxm", 1, 141.0, "on_demand", 3.1, 3, "list", reading=140),
            _vast("H200", "h200-sxm", 1, 141.0, "on_demand", 2.9, 3, "lowest_now", reading=140),
            _vast("H200", "h200-sxm", 8, 141.0, "on_demand", 3.5, 1, "lowest_now", reading=140),
            # one name, two cards: 40 GB and 80 GB listings are never one statistic
            _vast("A100 SXM4", "a100-40gb", 1, 40.0, "on_demand", 0.6, 1, "lowest_now"),
            _vast("A100 SXM4", "a100-80gb-sxm", 1, 80.0, "on_demand", 1.05, 1, "lowest_now"),
        ],
    )
    assert result.report.notes[0] == "listings without the search response's 'offers' envelope"


JSON_FIXTURES = [
    ("runpod", "bare_list"),
    ("runpod", "subset_envelope"),
    ("aws", "us_east"),
    ("azure", "page"),
    ("azure", "bare_items"),
    ("oci", "products"),
    ("vastai", "offers"),
    ("vastai", "bare_list"),
]


@pytest.mark.parametrize(("provider", "name"), JSON_FIXTURES)
def test_each_layout_is_its_providers_and_no_other_providers(provider: str, name: str) -> None:
    content = page(provider, name)
    assert parse_page(provider, content).offers  # identity confirmed (scrapers/identity.py)
    for other in ("runpod", "aws", "azure", "oci", "vastai", "lambda", "coreweave"):
        if other != provider:
            with pytest.raises(StructureMissing):
                parse_page(other, content)


def test_runpod_enveloped_field_subset_without_cloud_flags() -> None:
    # ewyluda/gpu-price-index tests/fixtures/runpod.json @d789fed5: {"data": {"gpuTypes": [...]}} with
    # id, displayName, memoryInGb, securePrice and communityPrice only
    result = runpod.parse(page("runpod", "subset_envelope"))

    def pod(sku: str, raw: str, gpu: str, vram: float, price: float, community: bool = False) -> dict:
        return full_offer(
            "runpod",
            gpu=gpu,
            gpu_raw=raw,
            gpu_count=1,
            vram_gb=vram,
            community=community,
            usd_per_gpu_hour=price,
            sku=sku,
        )

    assert_offers(
        result,
        [
            pod("NVIDIA H200 NVL", "H200 NVL", "h200-nvl", 143.0, 3.69),
            # 0.50 on community cloud is likely Runpod's placeholder, but without the cloud flags
            # nothing on the page says so: kept, and the report warns
            pod("NVIDIA H200 NVL", "H200 NVL", "h200-nvl", 143.0, 0.5, community=True),
            # the small-form-factor card runs at lower clocks: not the catalog's rtx-4000-ada
            pod("NVIDIA RTX 4000 SFF Ada Generation", "RTX 4000 Ada SFF", "unknown", 20.0, 0.42),
            pod(
                "NVIDIA RTX 4000 SFF Ada Generation",
                "RTX 4000 Ada SFF",
                "unknown",
                20.0,
                0.19,
                community=True,
            ),
            pod(
                "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
                "RTX PRO 6000 MaxQ",
                "rtx-pro-6000-maxq",
                96.0,
                1.99,
            ),
            pod(
                "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
                "RTX PRO 6000 MaxQ",
                "rtx-pro-6000-maxq",
                96.0,
                1.59,
                community=True,
            ),
            # securePrice 0: not offered on secure cloud
            pod("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB", "a100-40gb", 40.0, 1.0, community=True),
        ],
    )
    assert result.report.notes == [runpod.NO_CLOUD_FLAGS_NOTE]
    assert result.report.unknown_gpus == ["RTX 4000 Ada SFF"]
