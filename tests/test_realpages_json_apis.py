"""The JSON-source parsers on real responses the providers served (``../shared/realpages/``).

Each capture is read here as a person reads it: every offer written out field by field from the
file (per-GPU prices divided by hand, with the arithmetic in a comment), never copied from the
parser's output. The captures are not in the repository (third-party files): these tests locate
them beside it (``<repo>/../shared/realpages``, see its SOURCES.md for provenance) and skip, saying
so, when the folder is absent (a fresh clone). The project's own fixtures in the same structures
(tests/fixtures/pages/<provider>/real_structure*.json) test the same paths everywhere.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from realpages import real_capture as real_page

from gpuprice.scrapers.providers import aws, azure, oci, runpod, vastai
from parser_support import assert_offers, full_offer, report_of

# ----- Runpod: Jumbo2020/gpu_prices gpu_prices.json @13a47f94, 2025-06-21 -------------------------
# The GraphQL gpuTypes list stored without its {"data": {...}} envelope. Every price is per GPU-hour
# of a one-GPU pod. A cloud the API says does not carry the GPU (secureCloud/communityCloud false)
# has no offer even when a price field is filled (MI300X "communityPrice": 0.5 on a GPU that is not
# on community cloud); savings plans (threeMonthPrice, sixMonthPrice) are secure-cloud prices.


def _runpod(
    sku: str,
    raw: str,
    gpu: str,
    vram: float,
    *,
    secure: float | None = None,
    community: float | None = None,
    secure_spot: float | None = None,
    community_spot: float | None = None,
    m3: float | None = None,
    m6: float | None = None,
) -> list[dict]:
    """The offers of one gpuType, in the order the API lists its price fields."""
    common = dict(gpu=gpu, gpu_raw=raw, gpu_count=1, vram_gb=vram, sku=sku)
    prices = [
        (secure, dict(tier="on_demand", community=False)),
        (community, dict(tier="on_demand", community=True)),
        (secure_spot, dict(tier="spot", community=False)),
        (community_spot, dict(tier="spot", community=True)),
        (m3, dict(tier="reserved", community=False, commitment_months=3)),
        (m6, dict(tier="reserved", community=False, commitment_months=6)),
    ]
    return [
        full_offer("runpod", **common, **kind, usd_per_gpu_hour=price)
        for price, kind in prices
        if price is not None
    ]


RUNPOD_OFFERS = [
    # communityCloud false: communityPrice 0.5 is no offer
    *_runpod(
        "AMD Instinct MI300X OAM", "MI300X", "mi300x", 192, secure=2.49, secure_spot=1.49, m3=2.117, m6=1.992
    ),
    *_runpod(
        "NVIDIA A100 80GB PCIe",
        "A100 PCIe",
        "a100-80gb-pcie",
        80,
        secure=1.64,
        community=1.19,
        secure_spot=0.82,
        community_spot=0.6,
        m3=1.427,
        m6=1.394,
    ),
    *_runpod(
        "NVIDIA A100-SXM4-80GB",
        "A100 SXM",
        "a100-80gb-sxm",
        80,
        secure=1.74,
        community=1.39,
        secure_spot=0.95,
        community_spot=0.79,
        m3=1.644,
        m6=1.607,
    ),
    # secureCloud false: securePrice 0.41 and secureSpotPrice 0.21 are no offers
    *_runpod("NVIDIA A30", "A30", "a30", 24, community=0.22, community_spot=0.11),
    # communityCloud false
    *_runpod("NVIDIA A40", "A40", "a40", 48, secure=0.4, secure_spot=0.28, m3=0.34, m6=0.32),
    *_runpod("NVIDIA B200", "B200", "b200", 180, secure=6.39, m3=6.007, m6=5.559),
    # GeForce cards: the catalogued ones by slug, the others unknown, reported by their raw names
    *_runpod("NVIDIA GeForce RTX 3070", "RTX 3070", "unknown", 8, community=0.13, community_spot=0.07),
    *_runpod("NVIDIA GeForce RTX 3080", "RTX 3080", "rtx-3080", 10, community=0.17, community_spot=0.09),
    *_runpod(
        "NVIDIA GeForce RTX 3080 Ti", "RTX 3080 Ti", "rtx-3080-ti", 12, community=0.18, community_spot=0.09
    ),
    *_runpod(
        "NVIDIA GeForce RTX 3090",
        "RTX 3090",
        "rtx-3090",
        24,
        secure=0.46,
        community=0.22,
        secure_spot=0.22,
        community_spot=0.11,
        m3=0.366,
        m6=0.344,
    ),
    *_runpod(
        "NVIDIA GeForce RTX 3090 Ti", "RTX 3090 Ti", "rtx-3090-ti", 24, community=0.27, community_spot=0.14
    ),
    *_runpod("NVIDIA GeForce RTX 4070 Ti", "RTX 4070 Ti", "unknown", 12, community=0.19, community_spot=0.1),
    *_runpod("NVIDIA GeForce RTX 4080", "RTX 4080", "rtx-4080", 16, community=0.27, community_spot=0.16),
    *_runpod(
        "NVIDIA GeForce RTX 4080 SUPER",
        "RTX 4080 SUPER",
        "rtx-4080-super",
        16,
        community=0.28,
        community_spot=0.17,
    ),
    *_runpod(
        "NVIDIA GeForce RTX 4090",
        "RTX 4090",
        "rtx-4090",
        24,
        secure=0.69,
        community=0.34,
        secure_spot=0.35,
        community_spot=0.2,
        m3=0.649,
        m6=0.6,
    ),
    *_runpod("NVIDIA GeForce RTX 5080", "RTX 5080", "unknown", 16, community=0.49, community_spot=0.25),
    *_runpod(
        "NVIDIA GeForce RTX 5090", "RTX 5090", "rtx-5090", 32, secure=0.94, community=0.69, m3=0.837, m6=0.774
    ),
    *_runpod(
        "NVIDIA H100 80GB HBM3",
        "H100 SXM",
        "h100-sxm",
        80,
        secure=2.99,
        community=2.69,
        secure_spot=1.75,
        community_spot=1.5,
        m3=2.811,
        m6=2.601,
    ),
    *_runpod(
        "NVIDIA H100 NVL",
        "H100 NVL",
        "h100-nvl",
        94,
        secure=2.79,
        community=2.59,
        secure_spot=1.65,
        community_spot=1.4,
        m3=2.623,
        m6=2.427,
    ),
    *_runpod(
        "NVIDIA H100 PCIe",
        "H100 PCIe",
        "h100-pcie",
        80,
        secure=2.19,
        community=1.99,
        secure_spot=1.25,
        community_spot=1.35,
        m3=2.247,
        m6=2.079,
    ),
    *_runpod("NVIDIA H200", "H200 SXM", "h200-sxm", 141, secure=3.99, community=3.59, m3=3.751, m6=3.471),
    # communityCloud false: communityPrice 0.44 is no offer
    *_runpod("NVIDIA L4", "L4", "l4", 24, secure=0.43, secure_spot=0.22, m3=0.366, m6=0.344),
    *_runpod(
        "NVIDIA L40", "L40", "l40", 48, secure=0.99, community=0.69, secure_spot=0.5, m3=0.861, m6=0.842
    ),
    *_runpod(
        "NVIDIA L40S",
        "L40S",
        "l40s",
        48,
        secure=0.86,
        community=0.79,
        secure_spot=0.43,
        community_spot=0.4,
        m3=0.748,
        m6=0.731,
    ),
    *_runpod(
        "NVIDIA RTX 2000 Ada Generation",
        "RTX 2000 Ada",
        "rtx-2000-ada",
        16,
        secure=0.23,
        secure_spot=0.14,
        m3=0.196,
        m6=0.184,
    ),
    *_runpod(
        "NVIDIA RTX 4000 Ada Generation",
        "RTX 4000 Ada",
        "rtx-4000-ada",
        20,
        secure=0.26,
        community=0.2,
        secure_spot=0.19,
        community_spot=0.1,
        m3=0.221,
        m6=0.208,
    ),
    # secureCloud false: securePrice 0.83, secureSpotPrice 0.42 and threeMonthPrice 0.71 are no offers
    *_runpod(
        "NVIDIA RTX 5000 Ada Generation",
        "RTX 5000 Ada",
        "rtx-5000-ada",
        32,
        community=0.49,
        community_spot=0.25,
    ),
    *_runpod(
        "NVIDIA RTX 6000 Ada Generation",
        "RTX 6000 Ada",
        "rtx-6000-ada",
        48,
        secure=0.77,
        community=0.74,
        secure_spot=0.39,
        community_spot=0.4,
        m3=0.67,
        m6=0.655,
    ),
    *_runpod("NVIDIA RTX A2000", "RTX A2000", "unknown", 6, community=0.12, community_spot=0.06),
    *_runpod(
        "NVIDIA RTX A4000",
        "RTX A4000",
        "a4000",
        16,
        secure=0.24,
        community=0.17,
        secure_spot=0.16,
        community_spot=0.09,
        m3=0.204,
        m6=0.192,
    ),
    *_runpod(
        "NVIDIA RTX A4500",
        "RTX A4500",
        "a4500",
        20,
        secure=0.25,
        community=0.19,
        secure_spot=0.18,
        community_spot=0.1,
        m3=0.213,
        m6=0.2,
    ),
    *_runpod(
        "NVIDIA RTX A5000",
        "RTX A5000",
        "a5000",
        24,
        secure=0.26,
        community=0.16,
        secure_spot=0.14,
        community_spot=0.11,
        m3=0.221,
        m6=0.208,
    ),
    *_runpod(
        "NVIDIA RTX A6000",
        "RTX A6000",
        "a6000",
        48,
        secure=0.49,
        community=0.33,
        secure_spot=0.33,
        community_spot=0.25,
        m3=0.426,
        m6=0.417,
    ),
    # the Workstation Edition shares the catalog's rtx-pro-6000 slug; communityCloud false
    *_runpod(
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
        "RTX PRO 6000",
        "rtx-pro-6000",
        96,
        secure=1.79,
        m3=1.683,
        m6=1.557,
    ),
    *_runpod("Tesla V100-FHHL-16GB", "V100 FHHL", "v100-16gb", 16, community=0.19, community_spot=0.1),
    *_runpod("Tesla V100-PCIE-16GB", "Tesla V100", "v100-16gb", 16, community=0.19, community_spot=0.1),
    *_runpod("Tesla V100-SXM2-16GB", "V100 SXM2", "v100-16gb", 16, community=0.23, community_spot=0.12),
    # secureCloud false: securePrice 0.49, secureSpotPrice 0.25, threeMonthPrice 0.42 are no offers
    *_runpod("Tesla V100-SXM2-32GB", "V100 SXM2 32GB", "v100", 32, community=0.33, community_spot=0.17),
    # the placeholder {"id": "unknown", every price 0}: unpriced, no offer
]


def test_runpod_gpu_types_without_the_graphql_envelope() -> None:
    result = runpod.parse(real_page("runpod", "jumbo2020_gpuTypes_2025-06-21.json"))
    assert_offers(result, RUNPOD_OFFERS)
    assert len(result.offers) == 149
    ignored = [
        ("AMD Instinct MI300X OAM", "communityPrice", "community"),
        ("NVIDIA A30", "securePrice", "secure"),
        ("NVIDIA A30", "secureSpotPrice", "secure"),
        ("NVIDIA A40", "communityPrice", "community"),
        ("NVIDIA A40", "communitySpotPrice", "community"),
        ("NVIDIA B200", "communityPrice", "community"),
        ("NVIDIA GeForce RTX 3090 Ti", "securePrice", "secure"),
        ("NVIDIA GeForce RTX 4070 Ti", "securePrice", "secure"),
        ("NVIDIA GeForce RTX 4080", "securePrice", "secure"),
        ("NVIDIA GeForce RTX 4080 SUPER", "securePrice", "secure"),
        ("NVIDIA GeForce RTX 5080", "securePrice", "secure"),
        ("NVIDIA GeForce RTX 5080", "secureSpotPrice", "secure"),
        ("NVIDIA L4", "communityPrice", "community"),
        ("NVIDIA RTX 2000 Ada Generation", "communityPrice", "community"),
        ("NVIDIA RTX 5000 Ada Generation", "securePrice", "secure"),
        ("NVIDIA RTX 5000 Ada Generation", "secureSpotPrice", "secure"),
        ("NVIDIA RTX 5000 Ada Generation", "threeMonthPrice", "secure"),
        ("NVIDIA RTX A2000", "securePrice", "secure"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "communityPrice", "community"),
        ("Tesla V100-SXM2-32GB", "securePrice", "secure"),
        ("Tesla V100-SXM2-32GB", "secureSpotPrice", "secure"),
        ("Tesla V100-SXM2-32GB", "threeMonthPrice", "secure"),
    ]
    assert report_of(result, "runpod") == {
        "rows_seen": 39,
        "offers": 149,
        "unpriced_rows": 1,  # the "unknown" placeholder type
        "rejected": [],
        "unknown_gpus": [
            "RTX 3070",
            "RTX 4070 Ti",
            "RTX 5080",
            "RTX A2000",
        ],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [
            "gpuTypes list without the GraphQL data envelope",
            *(f"{sku}: {field} ignored, {cloud}Cloud is false" for sku, field, cloud in ignored),
        ],
    }


# ----- AWS: ewyluda/gpu-price-index tests/fixtures/aws.json @d789fed5, about 2026-09 --------------
# A per-region on-demand price document (meteredUnitMaps), US East (N. Virginia) only, 10 GPU
# instance types. "price" is per instance-hour; per GPU = price / the instance's GPU count.


def _aws(
    sku: str, gpu: str, raw: str, count: int, vram: float | None, instance: float, per_gpu: float
) -> dict:
    return full_offer(
        "aws",
        gpu=gpu,
        gpu_raw=raw,
        gpu_count=count,
        vram_gb=vram,
        usd_per_gpu_hour=per_gpu,
        usd_per_instance_hour=instance,
        region="us-east-1",
        sku=sku,
    )


def test_aws_us_east_price_document() -> None:
    result = aws.parse(real_page("aws", "ewyluda_aws_us-east-1_meteredUnitMap_excerpt_2026-09.json"))
    L40S = ("l40s", "NVIDIA L40S")
    assert_offers(
        result,
        [
            _aws("g6e.48xlarge", *L40S, 8, 48, 30.1312, 3.7664),  # 30.13118 / 8 = 3.7663975
            _aws(
                "p4de.24xlarge", "a100-80gb-sxm", "NVIDIA A100 80GB HBM2e", 8, 80, 27.4471, 3.4309
            ),  # 27.44705 / 8
            _aws("p5.48xlarge", "h100-sxm", "NVIDIA H100 80GB HBM3", 8, 80, 55.04, 6.88),
            _aws("g6e.12xlarge", *L40S, 4, 48, 10.4926, 2.6232),  # 10.49264 / 4 = 2.62316
            _aws("p5en.48xlarge", "h200-sxm", "NVIDIA H200 141GB HBM3e", 8, 141, 63.296, 7.912),
            # $142.416 for the whole instance is 8 B300s at 17.802 each, not one GPU's price
            _aws("p6-b300.48xlarge", "b300", "NVIDIA B300", 8, None, 142.416, 17.802),
            _aws(
                "p4d.24xlarge", "a100-40gb", "NVIDIA A100 40GB HBM2", 8, 40, 21.9576, 2.7447
            ),  # 21.957642 / 8
            _aws("g6e.xlarge", *L40S, 1, 48, 1.861, 1.861),
            _aws("p5.4xlarge", "h100-sxm", "NVIDIA H100 80GB HBM3", 1, 80, 6.88, 6.88),
            _aws("p6-b200.48xlarge", "b200", "NVIDIA B200", 8, 179, 113.9328, 14.2416),  # 113.9328 / 8
        ],
    )
    assert report_of(result, "aws") == {
        "rows_seen": 10,
        "offers": 10,
        "unpriced_rows": 0,
        "rejected": [],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [],
    }


# ----- Azure: mrmonroe90/compute-price-tracker tests/fixtures/azure_retail_eastus_nd_2026-07-27.json
# @bacf91dd, 2026-07-27: a Retail Prices API page trimmed to 10 items of ND sizes in eastus.


def test_azure_retail_prices_eastus_nd_sizes() -> None:
    result = azure.parse(real_page("azure", "mrmonroe90_azure_retail_eastus_nd_2026-07-27.json"))
    h100 = dict(
        gpu="h100-sxm",
        gpu_raw="NVIDIA H100 80GB",
        gpu_count=8,
        vram_gb=80.0,
        region="eastus",
        sku="Standard_ND96isr_H100_v5",
    )
    assert_offers(
        result,
        [
            full_offer("azure", **h100, usd_per_gpu_hour=12.29, usd_per_instance_hour=98.32),  # 98.32 / 8
            # reservations are priced for the whole term: 551,221 / 8,760 h = 62.9248 per VM-hour, / 8
            full_offer(
                "azure",
                **h100,
                tier="reserved",
                commitment_months=12,
                usd_per_gpu_hour=7.8656,
                usd_per_instance_hour=62.9248,
            ),
            # 1,134,310 / 26,280 h = 43.1625 per VM-hour; / 8 = 5.3953
            full_offer(
                "azure",
                **h100,
                tier="reserved",
                commitment_months=36,
                usd_per_gpu_hour=5.3953,
                usd_per_instance_hour=43.1625,
            ),
            # the four Windows meters, the DevTest and the Low Priority meters are not offers;
            # "ND96asr_A100_v4 Spot" on Linux: 5.98334 / 8 = 0.7479
            full_offer(
                "azure",
                gpu="a100-40gb",
                gpu_raw="NVIDIA A100 40GB",
                gpu_count=8,
                vram_gb=40.0,
                tier="spot",
                usd_per_gpu_hour=0.7479,
                usd_per_instance_hour=5.9833,
                region="eastus",
                sku="Standard_ND96asr_v4",
            ),
            # ND96is H100 v5 (no InfiniBand): 8 GPUs by Microsoft's Azure ML VM SKU list
            # (MicrosoftDocs/azure-ai-docs reference-managed-online-endpoints-vm-sku-list.md
            # @43dc14ea: standardNDv5H100Family, 8 NvidiaGpu); 88.488 / 8 = 11.061
            full_offer(
                "azure",
                **{**h100, "sku": "Standard_ND96is_H100_v5"},
                usd_per_gpu_hour=11.061,
                usd_per_instance_hour=88.488,
            ),
        ],
    )
    assert report_of(result, "azure") == {
        "rows_seen": 10,
        "offers": 5,
        "unpriced_rows": 0,
        "rejected": [],
        "unknown_gpus": [],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [],
    }


# ----- OCI: ewyluda/gpu-price-index tests/fixtures/oracle.json @1e77fb70, lastUpdated 2026-10-01 ---
# The products price list trimmed to GPU items. "GPU Per Hour" values are per-GPU prices; the
# instance price is that times the GPUs of the bare-metal shape the item prices.


def _oci(sku: str, gpu: str, raw: str, count: int, vram: float | None, per_gpu: float) -> dict:
    return full_offer(
        "oci",
        gpu=gpu,
        gpu_raw=raw,
        gpu_count=count,
        vram_gb=vram,
        usd_per_gpu_hour=per_gpu,
        usd_per_instance_hour=round(per_gpu * count, 4),
        sku=sku,
    )


def test_oci_price_list_with_cloud_at_customer_and_commit_items() -> None:
    result = oci.parse(real_page("oci", "ewyluda_oracle_products_excerpt_2026-10-01.json"))
    assert_offers(
        result,
        [
            _oci("BM.GPU.L40S.4", "l40s", "NVIDIA L40S", 4, 48, 3.5),  # "Compute - GPU - L40S"
            _oci("BM.GPU.MI300X.8", "mi300x", "AMD Instinct MI300X", 8, 192, 6.0),
            _oci("BM.GPU.H200.8", "h200-sxm", "NVIDIA H200 141GB", 8, 141, 10.0),
            _oci("BM.GPU.B200.8", "b200", "NVIDIA B200", 8, 180, 14.0),
            _oci("BM.GPU.GB200.4", "gb200", "NVIDIA GB200", 4, None, 16.0),
            _oci(
                "BM.GPU.MI355X.8", "mi355x", "AMD Instinct MI355X", 8, 288, 8.6
            ),  # "OCI- Compute - GPU - MI355X"
            # GB300 is not in the GPU catalog: unknown, but its shape (4 per tray) is known
            _oci("BM.GPU.GB300.4", "unknown", "NVIDIA GB300", 4, None, 18.0),
            _oci("BM.GPU.B300.8", "b300", "NVIDIA B300", 8, 288, 15.0),  # "Oracle Cloud Infrastructure - ..."
            _oci(
                "BM.GPU.RTXPRO.8", "rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 8, 96, 4.5
            ),
            _oci("BM.GPU.A100-v2.8", "a100-80gb-sxm", "NVIDIA A100 80GB", 8, 80, 4.0),
            _oci("BM.GPU.A10.4", "a10", "NVIDIA A10", 4, 24, 2.0),  # "Compute  - GPU - A10" (two spaces)
            _oci("BM.GPU.H100.8", "h100-sxm", "NVIDIA H100 80GB", 8, 80, 10.0),
        ],
    )

    def quarantined(part: str, name: str, price: float) -> dict:
        return {
            "raw": f'{part} | {name} | [{{"currencyCode": "USD", "prices": [{{"model": "PAY_AS_YOU_GO", "value": {price}}}]}}]',
            "reason": f"{name} is not in the shape table (scrapers/data/instance_types.csv): "
            f"GPU and shape unknown, ${float(price)} per GPU-hour not stored as an offer",
        }

    generation_labels = [
        ("B88517", "Compute - Bare Metal GPU Standard - X7", "1.275"),
        ("B88518", "Compute - Virtual Machine GPU Standard - X7", "1.275"),
        ("B89734", "Compute - GPU Standard - V2", "2.95"),
        ("B92740", "Compute - GPU - E3", "3.05"),
        ("B93544", "OCI - Compute - GPU - E4", "3.05"),
    ]
    assert report_of(result, "oci") == {
        # all 26 items name a GPU (the VMware nodes are BM.GPU.A10.64 shapes)
        "rows_seen": 26,
        "offers": 12,
        "unpriced_rows": 0,
        "rejected": [
            quarantined("B109480", "OCI - Compute - GPU - H100T", "10.75"),
            *(quarantined(part, name, price) for part, name, price in generation_labels),
        ],
        "unknown_gpus": [
            "OCI - Compute - GPU - H100T",
            "NVIDIA GB300",
            *(name for _, name, _ in generation_labels),
        ],
        "missing_columns": [],
        "unexpected_columns": [],
        "notes": [
            # the Oracle Cloud VMware Solution BM.GPU.A10.64 nodes (monthly, 1-year, 3-year)
            "commit items skipped (prices under a usage commitment, not on-demand): B108806, B108807, B108808",
            # "Roving Edge Device - RED.2 GPU", per day
            "GPU items not priced per GPU-hour skipped: B109493",
            # incl. the "Resource Commit" at $0.60/GPU-h that was once read as an on-demand L40S
            "Cloud@Customer items skipped (on-premises racks under a commitment, not rentable on demand): "
            "B110965, B111454, B111455, B111463",
        ],
    }


# ----- Vast.ai: munkhbayarbr/gpu-radar data/offers.json @3c84bca0, 2026-08-17 ---------------------
# An anonymous search: 64 listings, the cap without an API key, all consumer cards (the cheapest
# of the market, ordered by dph_total). Grouped by name, memory (gpu_ram MiB / 1024, rounded) and
# GPU count, no group reaches 3 listings: no median is published, only each group's cheapest ask
# (basis lowest_now); bid floors (min_bid) give no offer without a median. The offers' vram_gb is
# the card's memory as sold where the GPU is a catalog card and the reading is that card's (vastai/5):
# the same as the reading (GB column, the SKU's) for all but the A10, whose driver reports 22 GiB
# of the 24 GB it is sold with; unknown cards keep the reading.

# (gpu_name, GB, GPUs, slug, cheapest dph_total of the group, listings), in the file's order
VAST_GROUPS = [
    ("GTX 1650", 4, 1, "unknown", "0.0471", 1),
    ("GTX TITAN X", 12, 1, "unknown", "0.0481", 1),
    ("GTX 1660", 6, 1, "unknown", "0.0481", 1),
    ("GTX 1070 Ti", 8, 1, "unknown", "0.0547", 1),
    ("GTX 1660 S", 6, 1, "unknown", "0.0547", 1),
    ("RTX 3060", 12, 1, "rtx-3060", "0.0547", 1),
    ("Quadro P4000", 8, 1, "unknown", "0.0556", 1),
    ("RTX 3070 laptop", 8, 1, "unknown", "0.0574", 1),
    ("GTX 1080 Ti", 11, 1, "unknown", "0.0614", 1),
    ("Titan Xp", 12, 1, "unknown", "0.0614", 1),
    ("RTX 2060S", 8, 1, "unknown", "0.0654", 1),
    ("RTX 5060", 8, 1, "unknown", "0.069", 1),  # 8151 MiB
    ("RTX 2080 Ti", 22, 1, "unknown", "0.0694", 1),  # a 22 GB (modified) card
    ("RTX 4060 Ti", 16, 1, "rtx-4060-ti-16gb", "0.0736", 1),
    ("RTX 5060 Ti", 8, 1, "unknown", "0.0761", 1),
    ("RTX 2080 Ti", 11, 1, "rtx-2080-ti", "0.0801", 1),
    ("GTX 1060", 3, 1, "unknown", "0.0876", 1),
    ("RTX 4070", 12, 1, "unknown", "0.0894", 1),
    ("RTX 4070S", 12, 1, "unknown", "0.0894", 1),
    ("RTX A4000", 16, 1, "a4000", "0.0943", 1),
    ("RTX 3070", 8, 1, "unknown", "0.0947", 1),
    ("RTX 3070 Ti", 8, 1, "unknown", "0.0956", 1),
    ("GTX 1080", 8, 2, "unknown", "0.1027", 1),
    ("Tesla P40", 24, 1, "p40", "0.1067", 1),
    ("A16", 15, 1, "unknown", "0.1076", 1),
    ("RTX 4070 Ti", 12, 1, "unknown", "0.1076", 1),
    ("RTX 3080", 10, 1, "rtx-3080", "0.1081", 1),
    ("GTX 1660 S", 6, 2, "unknown", "0.1134", 1),
    ("RTX 3080", 20, 1, "unknown", "0.1135", 1),
    ("RTX 5070 Ti", 16, 1, "unknown", "0.1187", 1),
    ("RTX 3060", 12, 2, "rtx-3060", "0.1209", 1),
    ("RTX 3080 Ti", 12, 1, "rtx-3080-ti", "0.1214", 1),
    ("RTX 4080", 16, 1, "rtx-4080", "0.1223", 1),
    ("RTX 4060", 8, 2, "unknown", "0.1228", 1),
    ("RTX 4070S Ti", 16, 1, "unknown", "0.127", 1),
    ("GTX 1080 Ti", 11, 2, "unknown", "0.1294", 1),
    # the Turing Quadro RTX 6000 (23040 MiB = 22.5 GB, rounded to even): not a catalog card
    ("Q RTX 6000", 22, 1, "unknown", "0.1343", 1),
    ("RTX 5070", 12, 1, "unknown", "0.1343", 1),
    ("RTX 4000Ada", 20, 1, "rtx-4000-ada", "0.1347", 1),
    ("RTX 5060 Ti", 16, 1, "unknown", "0.1347", 2),  # 0.1347 and 0.1774
    ("RTX A2000", 6, 2, "unknown", "0.1356", 1),
    ("RTX 5060", 8, 2, "unknown", "0.1356", 1),
    ("GTX 1660 Ti", 6, 2, "unknown", "0.1361", 1),
    ("RTX A2000", 6, 1, "unknown", "0.1374", 1),
    ("RTX 4060 Ti", 16, 2, "rtx-4060-ti-16gb", "0.1403", 1),
    ("GTX 1070", 8, 3, "unknown", "0.1414", 1),
    ("RTX 2080 Ti", 11, 2, "rtx-2080-ti", "0.1614", 1),
    ("Tesla P100", 12, 2, "unknown", "0.1619", 1),
    ("Quadro P4000", 8, 3, "unknown", "0.1623", 1),
    ("RTX 4070 Ti", 12, 2, "unknown", "0.1628", 1),
    ("RTX 4070", 12, 2, "unknown", "0.1628", 1),
    ("RTX 5080", 16, 1, "unknown", "0.1628", 1),
    ("RTX 4070S", 12, 2, "unknown", "0.1761", 1),
    ("GTX 1070", 8, 4, "unknown", "0.1881", 1),
    ("RTX A4000", 16, 2, "a4000", "0.1881", 1),
    ("GTX 1660 S", 6, 4, "unknown", "0.1881", 1),
    ("RTX 3070", 8, 2, "unknown", "0.189", 1),
    ("RTX 3060", 12, 4, "rtx-3060", "0.189", 1),
    ("Tesla V100", 32, 1, "v100", "0.1904", 1),
    ("RTX 4080S", 32, 1, "unknown", "0.1946", 1),
    ("A10", 22, 1, "a10", "0.2009", 1),
    ("Tesla P100", 16, 1, "p100", "0.2014", 1),
    ("RTX 3070 Ti", 8, 2, "unknown", "0.2017", 1),
]


# The card's memory as sold where it differs from the listings' reading (the catalog's memory_gb).
VAST_SOLD_GB = {"a10": 24.0}


def _per_gpu(instance: str, gpus: int) -> float:
    """The instance price over the GPUs, rounded half up to 4 decimals as the contract asks."""
    return float((Decimal(instance) / gpus).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP))


def test_vastai_anonymous_search_of_64_consumer_listings() -> None:
    result = vastai.parse(real_page("vastai", "gpu-radar_offers_2026-08-17.json"))
    assert_offers(
        result,
        [
            full_offer(
                "vastai",
                gpu=slug,
                gpu_raw=name,
                gpu_count=gpus,
                vram_gb=VAST_SOLD_GB.get(slug, float(gb)),
                community=True,
                usd_per_gpu_hour=_per_gpu(cheapest, gpus),
                usd_per_instance_hour=float(cheapest),
                available=True,
                sku=f"{name} {gb}GB x{gpus}",
                price_basis="lowest_now",
                capacity=listings,
            )
            for name, gb, gpus, slug, cheapest, listings in VAST_GROUPS
        ],
    )
    report = report_of(result, "vastai")
    notes = report.pop("notes")
    assert report == {
        "rows_seen": 64,
        "offers": 63,
        "unpriced_rows": 0,
        "rejected": [],
        "unknown_gpus": list(dict.fromkeys(n for n, _, _, slug, _, _ in VAST_GROUPS if slug == "unknown")),
        "missing_columns": [],
        "unexpected_columns": [],
    }
    assert notes[:2] == [
        "a search returned exactly 64 listings, Vast.ai's cap without an API key: "
        "the statistics may rest on the cheapest listings only",
        # every listing has both an ask and a bid floor; 42 distinct names
        "statistics rest on 64 listings: 64 on-demand asks and 64 bid floors of 42 GPU names",
    ]
    assert notes[2].startswith(
        "no median published with fewer than 3 listings: GTX 1650 4GB x1 on_demand (1), "
    )
    assert "RTX 5060 Ti 16GB x1 on_demand (2), RTX 5060 Ti 16GB x1 spot (2)" in notes[2]
    assert notes[3] == (
        "memory per GPU as the card is sold, not the listings' gpu_ram reading (GiB): A10 22 -> 24 GB"
    )
    assert len(notes) == 4
