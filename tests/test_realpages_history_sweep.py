"""The parsers on structures a sweep of real captures across history and across trackers turned up.

Each test reads the project's own fixture written in the structure of one real capture (the capture
is never copied into the repository; its repository, path and full commit are cited), with rows cut
down and prices invented; the expected offers are written out from reading the fixture. Captures that
are another cloud's page (tests/fixtures/pages/unrelated/*_excerpt.html, in the structures of
henryzhangpku/gpu-price-index's DataCrunch, Fluidstack, Hyperstack and Voltage Park excerpts) are
refused under every provider's name by tests/test_identity.py.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from test_realpages_html import _nb, assert_contract_offers, offer

from gpuprice.scrapers.identity import STRUCTURE, confirm
from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.providers import azure
from gpuprice.scrapers.registry import IDENTITIES, parse_page
from parser_support import fixture_dir


def _page(provider: str, name: str) -> bytes:
    return (fixture_dir(provider) / name).read_bytes()


def test_coreweave_2023_component_rows_whose_header_row_was_cut() -> None:
    """henryzhangpku/gpu-price-index tests/fixtures/backfill/coreweave_20230921194906.html
    @c4ae7ff99961a566d842c1044b5db2dee1f48fd1 (the GPU cloud pricing page, 2023-09-21), kept cut
    from inside the header row: only its last cell, "GPU Component<br/>Cost Per Hour", precedes the
    rows (Webflow "table-body-row w-row" > "w-col" cells: name | 80 | 48 | 256 | $4.76). The price
    is the GPU component's, per GPU-hour (vCPU and RAM billed on top), so each row is a one-GPU
    offer. Before the fix the page exited 3 ("no GPU table with name, GPU count and price
    columns"). The row the cut left at its name (Tesla V100 NVLINK) is no row. Own excerpt:
    tests/fixtures/pages/coreweave/component_rows_cut_header_2023.html."""
    page = _page("coreweave", "component_rows_cut_header_2023.html")
    assert confirm("coreweave", page.decode(), IDENTITIES) == {STRUCTURE: 2}  # the header, no site or brand
    result = parse_page("coreweave", page)
    assert_contract_offers(
        result,
        [
            # the H100 price cell also holds a "Reserve Now" link
            offer("coreweave", "h100-sxm", "NVIDIA HGX H100", 1, None, "on_demand", 4.4),
            offer("coreweave", "a100-80gb-sxm", "A100 80GB NVLINK", 1, None, "on_demand", 2.1),
            offer("coreweave", "a100-40gb", "A100 40GB PCIe", 1, None, "on_demand", 1.95),
            offer("coreweave", "a6000", "RTX A6000", 1, None, "on_demand", 1.2),
            offer("coreweave", "unknown", "Quadro RTX 5000", 1, None, "on_demand", 0.5),
        ],
    )
    assert [o.sku for o in result.offers][:1] == ["NVIDIA HGX H100 [GPU component]"]
    report = result.report
    assert (report.rows_seen, report.rejected, report.unknown_gpus) == (5, [], ["Quadro RTX 5000"])


def test_lambda_instance_table_excerpt_naming_neither_site_nor_brand() -> None:
    """henryzhangpku/gpu-price-index tests/fixtures/backfill/lambda_20260109103934.html
    @c4ae7ff99961a566d842c1044b5db2dee1f48fd1 (the pricing page, 2026-01-09), cut between
    'Instances pricing' and 'plus applicable sales tax': the 8x tab's table alone. Its markup names
    neither the site nor the brand (the capture's provenance comment does); without that comment
    it exited 3 ("no lambda domain, brand or page structure on it"). The table's CSS-module classes
    ("_pricingTable_z1nfw_13", "_pricingRow_z1nfw_36") and its "PRICE/GPU/HR" column are Lambda's
    page structure. The rows are 8-GPU instances (the selected 8x tab), priced per GPU-hour. Own
    excerpt: tests/fixtures/pages/lambda/instances_tab_excerpt_2026.html."""
    page = _page("lambda", "instances_tab_excerpt_2026.html")
    assert set(confirm("lambda", page.decode(), IDENTITIES)) == {STRUCTURE}
    result = parse_page("lambda", page)
    assert_contract_offers(
        result,
        [
            offer("lambda", "b200", "NVIDIA B200 SXM6", 8, 180.0, "on_demand", 4.7),
            offer("lambda", "a100-80gb-sxm", "NVIDIA A100 SXM", 8, 80.0, "on_demand", 1.6),
            offer("lambda", "a100-40gb", "NVIDIA A100 SXM", 8, 40.0, "on_demand", 1.15),
            offer("lambda", "v100-16gb", "NVIDIA Tesla V100", 8, 16.0, "on_demand", 0.5),
        ],
    )
    assert result.report.rejected == [] and result.report.unknown_gpus == []


def test_nebius_table_excerpt_naming_neither_site_nor_brand() -> None:
    """henryzhangpku/gpu-price-index tests/fixtures/backfill/nebius_20260712235400.html
    @c4ae7ff99961a566d842c1044b5db2dee1f48fd1 (the prices page, 2026-07-12), cut between 'NVIDIA
    GPU Instances' and 'CPU-only instances': one page-constructor highlight table (head section:
    Item | vCPUs | RAM, GB | Preemptible, GPU-hour | On-demand, GPU-hour). Its markup names neither
    the site nor the brand; without the capture's provenance comment it exited 3 ("no nebius
    domain, brand or page structure on it"). The "pc-highlight-table-block" class is Nebius's page
    structure. Own excerpt: tests/fixtures/pages/nebius/table_excerpt_2026_07.html."""
    page = _page("nebius", "table_excerpt_2026_07.html")
    assert set(confirm("nebius", page.decode(), IDENTITIES)) == {STRUCTURE}
    result = parse_page("nebius", page, observed_on=dt.date(2026, 7, 12))
    assert_contract_offers(
        result,
        [
            _nb("b200", "NVIDIA HGX B200", 8, "spot", 3.6),
            _nb("b200", "NVIDIA HGX B200", 8, "on_demand", 6.9),
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "spot", 1.95),
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "on_demand", 3.6),
            _nb("rtx-pro-6000", "NVIDIA RTX PRO 6000", 1, "spot", 0.85),
            _nb("rtx-pro-6000", "NVIDIA RTX PRO 6000", 1, "on_demand", 1.7),
            _nb("l40s", "NVIDIA L40S with AMD CPU", 1, "spot", 0.7, "from"),
            _nb("l40s", "NVIDIA L40S with AMD CPU", 1, "on_demand", 1.45, "from"),
        ],
    )
    report = result.report
    assert report.unpriced_rows == 1 and report.rejected == [] and report.unknown_gpus == []  # GB300


def test_azure_retail_items_as_a_tracker_renamed_them() -> None:
    """Jumbo2020/gpu_prices azure_gpu_prices.json (2025-06-21; 10 stored versions, e.g.
    @04958df1c1e33ee1a4bd3070412c534f0a9ff1b3 with 2,729 rows in 19 regions, and
    filtered_azure_gpu_prices.json @5da5e078a09d2f46f696c51e063b66d21bd4f902): Retail Prices items
    kept as {region, skuName, productName, pricePerHour, currency[, unitOfMeasure]}, without
    ``type``, ``reservationTerm`` or ``armSkuName``. Before the fix every version exited 3 ("no Items
    list"). A person reads the hourly meters: "ND96isrH100v5" 98.32 (8 GPUs) on demand, its "Spot"
    row as spot; the rows of 551,221 and 1,134,310 beside it are reservations priced for their
    whole term, which the row no longer names (not read); "Low Priority", the Windows and the
    Dedicated Host products are no GPU price; "L48s v2" (a CPU size the tracker's "L4" filter let
    through) carries no GPU. Own rows in that structure, cut down, prices invented:
    tests/fixtures/pages/azure/tracker_renamed_rows.json."""
    page = _page("azure", "tracker_renamed_rows.json")
    result = parse_page("azure", page)
    h100, a100 = (
        ("h100-sxm", "NVIDIA H100 80GB", 8, 80.0),
        ("a100-80gb-pcie", "NVIDIA A100 80GB PCIe", 1, 80.0),
    )
    assert_contract_offers(
        result,
        [
            offer("azure", *h100, "on_demand", 11.25, 90.0, region="eastus"),  # 90.00 / 8
            offer("azure", *h100, "spot", 4.5, 36.0, region="eastus"),  # 36.00 / 8
            # mapped since (Microsoft's NCasT4_v3 size page: 1 T4 16 GB; see the next test)
            offer("azure", "t4", "NVIDIA Tesla T4 16GB", 1, 16.0, "on_demand", 0.5, 0.5, region="eastus"),
            offer("azure", *a100, "on_demand", 3.5, 3.5, region="westeurope"),
            offer("azure", *a100, "spot", 1.0, 1.0, region="westeurope"),
        ],
    )
    assert [o.sku for o in result.offers] == ["Standard_ND96isr_H100_v5"] * 2 + ["Standard_NC4as_T4_v3"] + [
        "Standard_NC24ads_A100_v4"
    ] * 2
    report = result.report
    assert (report.rows_seen, report.unpriced_rows) == (13, 3)  # the three whole-term prices
    assert report.unknown_gpus == [] and report.rejected == []
    assert azure.TRACKER_ROWS_NOTE in report.notes


def test_azure_tracker_rows_of_older_and_renamed_n_sizes() -> None:
    """Jumbo2020/gpu_prices azure_gpu_prices.json @64a289fdc0cbc0f5c9c8ae9af27158c68d5dca7a (eastus,
    3,934 rows, the retired NC/ND/NV sizes among them) and @04958df1c1e33ee1a4bd3070412c534f0a9ff1b3
    (NCC40adsH100v5 in centralus and westeurope): sizes that came out unknown before the fix, now in
    scrapers/data/instance_types.csv from Microsoft's size pages (MicrosoftDocs/azure-docs
    articles/virtual-machines/sizes/gpu-accelerated/<series>.md, each row citing the page, its
    Accelerators tab and commit): NC (K80), NCv2 (P100 16 GB), NCv3 (V100 16 GB), NCasT4_v3 (T4),
    NCCads H100 v5 (1 H100 NVL 94 GB), ND (P40), NDv2 (8 V100 32 GB NVLink), NV and NVv3 (M60 8 GB),
    NVv4's one whole-GPU size (MI25) and NVadsA10 v5's whole-GPU sizes. K80, M60 and MI25 are not in
    the GPU catalog: offers with their count, GPU ``unknown`` under the card's name.

    Renamed meters: "ND96asr_A100_v4" is how Microsoft's size page names Standard_ND96asr_v4 and the
    Retail Prices API's skuName for it (mrmonroe90/compute-price-tracker
    tests/fixtures/azure_retail_eastus_nd_2026-07-27.json @bacf91ddc8a127e8c696ffaf1a9269fee2a675d8:
    armSkuName Standard_ND96asr_v4, skuName "ND96asr_A100_v4 Low Priority"); "ND96asrA100v4_NU" and
    "ND96amsA100v4" are meters of the one-size NDasr A100 v4 and NDamsr A100 v4 series (productName),
    at the same price as the size's other meter in every region of @04958df1 (30 region/tier pairs).
    The second meter of the same size, region and tier is the same offer (rejected as a duplicate).

    "Virtual Machines NCCadsv5 Srs Win" is that series' Windows product (abbreviated): skipped like
    "... Series Windows" (before the fix its 9.50 would have been read as the Linux price).

    Left unknown, quarantined with the VM price: fractions of a GPU (NV16as_v4 = 1/2 MI25,
    NV6ads_A10_v5 = 1/6 A10: no whole GPU count); names no Microsoft size page lists
    (ND96isnIBH100v5, and ND96isfH100v5 / ND96isflH100v5 / ND96isrfH100v5, NDmr40s v2) and the
    NVads V710 v5 sizes, for which no Microsoft size page stating a GPU count was found. Own rows in
    the tracker's structure, cut down, prices invented: tests/fixtures/pages/azure/tracker_older_sizes.json."""
    result = parse_page("azure", _page("azure", "tracker_older_sizes.json"))

    def az(
        gpu: str,
        raw: str,
        count: int,
        vram: float,
        tier: str,
        per_gpu: float,
        vm: float,
        region: str = "eastus",
    ) -> dict:
        return offer("azure", gpu, raw, count, vram, tier, per_gpu, vm, region=region)

    a100_40, a100_80 = (
        ("a100-40gb", "NVIDIA A100 40GB", 8, 40.0),
        ("a100-80gb-sxm", "NVIDIA A100 80GB", 8, 80.0),
    )
    nvl = ("h100-nvl", "NVIDIA H100 NVL 94GB", 1, 94.0)
    assert_contract_offers(
        result,
        [
            az("unknown", "NVIDIA Tesla K80", 1, 12.0, "on_demand", 0.5, 0.5),  # NC6; its Windows row skipped
            az("v100-16gb", "NVIDIA Tesla V100 16GB", 4, 16.0, "on_demand", 2.5, 10.0),  # NC24rs_v3
            az("t4", "NVIDIA Tesla T4 16GB", 4, 16.0, "on_demand", 1.0, 4.0),  # NC64as_T4_v3
            az("p40", "NVIDIA Tesla P40 24GB", 4, 24.0, "on_demand", 2.0, 8.0),  # ND24rs
            az("v100", "NVIDIA V100 32GB NVLink", 8, 32.0, "on_demand", 2.5, 20.0),  # ND40rs_v2
            az("unknown", "NVIDIA Tesla M60 8GB", 1, 8.0, "on_demand", 1.0, 1.0),  # NV12s_v3
            az("unknown", "AMD Radeon Instinct MI25 16GB", 1, 16.0, "on_demand", 1.5, 1.5),  # NV32as_v4
            az("a10", "NVIDIA A10 24GB", 2, 24.0, "on_demand", 3.0, 6.0),  # NV72ads_A10_v5
            az(*a100_40, "on_demand", 3.0, 24.0),  # ND96asr_A100_v4
            az(*a100_40, "spot", 0.75, 6.0),  # ND96asrA100v4_NU Spot
            az(*a100_80, "on_demand", 4.0, 32.0),  # ND96amsA100v4 (Linux; the Windows row skipped)
            az(*nvl, "on_demand", 8.0, 8.0, region="centralus"),  # "Srs" (Linux), not "Srs Win"
            az(*nvl, "spot", 6.4, 6.4, region="centralus"),
        ],
    )
    assert [o.sku for o in result.offers][8:11] == ["Standard_ND96asr_v4"] * 2 + ["Standard_ND96amsr_A100_v4"]
    report = result.report
    assert (report.rows_seen, report.unpriced_rows) == (23, 1)  # NC24rs v3's whole-term price
    assert report.unknown_gpus == [
        "NVIDIA Tesla K80",
        "NVIDIA Tesla M60 8GB",
        "AMD Radeon Instinct MI25 16GB",
        "NV16as v4",
        "Standard_NV6ads_A10_v5",
        "ND96isnIBH100v5",
        "NV28admsV710v5",
        "NDmr40s v2",
    ]
    assert [(row.raw.split(" | ")[0], row.reason.split(" is not in ")[0]) for row in report.rejected] == [
        ("NV16as v4", "NV16as v4"),
        ("Standard_NV6ads_A10_v5", "Standard_NV6ads_A10_v5"),
        ("Standard_ND96amsr_A100_v4", "duplicate offer"),  # the same size's other meter, same price
        ("ND96isnIBH100v5", "ND96isnIBH100v5"),
        ("NV28admsV710v5", "NV28admsV710v5"),
        ("NDmr40s v2", "NDmr40s v2"),
    ]


@pytest.mark.parametrize(
    "rows",
    [
        [],  # Jumbo2020/gpu_prices azure_gpu_prices.json @3ac9db2fc4a1b69669fb4fcaead69d106d0dd9ec
        # @874b43fe923311a0299e9ca002e54b2a6901bf3d: three Azure Container Apps meters, no VM
        [{"region": "eastus", "skuName": "Standard", "productName": "Azure Container Apps",
          "pricePerHour": 0.5, "currency": "USD"}],
    ],
    ids=["empty", "container-apps"],
)  # fmt: skip
def test_azure_tracker_rows_without_a_gpu_size_are_no_price_page(rows: list[dict]) -> None:
    with pytest.raises(StructureMissing, match="no Items list"):
        parse_page("azure", json.dumps(rows).encode())


def test_runpod_pricing_excerpt_starting_inside_its_first_row() -> None:
    """henryzhangpku/gpu-price-index tests/fixtures/backfill/runpod_20250909131230.html
    @f77f8dffafbcf4201438dac6980d37650227a0a2 (runpod.io/pricing, 2025-09-09), kept cut between
    '>H200<' and '>A100 PCIe<': the cut starts inside the H200 row, so its name, spec tags (141 GB
    VRAM) and price element (data-secure-cloud-price 3.79, data-community-cloud-price 3.59) sit
    outside any ``.gpu-pricing-row``. Before the fix that row was dropped without a word (the
    page's first GPU); it is read from those loose siblings. The A100 PCIe row, cut after its
    opening, has no price (unpriced). Own excerpt: tests/fixtures/pages/runpod/rows_cut_open_2025_09.html."""
    result = parse_page("runpod", _page("runpod", "rows_cut_open_2025_09.html"))
    h200, b200, h100 = (
        ("h200-sxm", "H200", 1, 141.0),
        ("b200", "B200", 1, 180.0),
        ("h100-sxm", "H100 SXM", 1, 80.0),
    )
    assert_contract_offers(
        result,
        [
            offer("runpod", *h200, "on_demand", 3.59),
            offer("runpod", *h200, "on_demand", 3.39, community=True),
            offer("runpod", *b200, "on_demand", 5.89),
            offer("runpod", *b200, "on_demand", 5.69, community=True),
            offer("runpod", *h100, "on_demand", 2.59),
            offer("runpod", *h100, "on_demand", 2.49, community=True),
        ],
    )
    first = result.offers[0]
    assert (first.sku, first.vcpus, first.ram_gb) == ("H200", 24.0, 276.0)
    report = result.report
    assert (report.rows_seen, report.unpriced_rows, report.rejected) == (4, 1, [])


def _oci_item(
    part: str, name: str, value: float, metric: str = "GPU Per Hour", category: str = "Compute - GPU"
) -> dict:
    """One price-list item in the fields of the real response."""
    return {
        "partNumber": part,
        "displayName": name,
        "metricName": metric,
        "serviceCategory": category,
        "currencyCodeLocalizations": [
            {"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": value}]}
        ],
    }


def test_oci_nvidia_ai_enterprise_licences_are_no_gpu_price() -> None:
    """getcomputable/gpu-index tests/fixtures/observatory/oracle/products_usd.json
    @38e515c00ad4c186cddb1ca004f18168cfd0d223 (lastUpdated 2026-08-14): beside "Oracle Cloud
    Infrastructure - Compute - GPU - H100" (B98415, the GPU per GPU-hour) the list prices eight
    "OCI - NVIDIA AI Enterprise - <GPU>" items per GPU-hour (B111824..B111831): NVIDIA's software
    licence, paid on top of the GPU. Before the fix each was quarantined as an unknown GPU
    ("OCI - NVIDIA AI Enterprise - H100" in unknown_gpus); they are skipped with a note. Own items in
    that structure, prices invented."""
    items = [
        _oci_item(
            "B108776", "WebCenter Imaging For OCI", 0.6, metric="OCPU Per Hour", category="WebCenter For OCI"
        ),
        _oci_item("B111824", "OCI - NVIDIA AI Enterprise - H100", 2.2),
        _oci_item("B111827", "OCI - NVIDIA AI Enterprise - A100 80", 0.9),
        _oci_item("B98415", "Oracle Cloud Infrastructure - Compute - GPU - H100", 9.5),
    ]
    result = parse_page(
        "oci", json.dumps({"lastUpdated": "2026-08-14T09:09:55.872Z", "items": items}).encode()
    )
    assert_contract_offers(
        result,
        [offer("oci", "h100-sxm", "NVIDIA H100 80GB", 8, 80.0, "on_demand", 9.5, 76.0)],  # 9.50 x 8
    )
    report = result.report
    assert report.unknown_gpus == [] and report.rejected == []
    assert (
        "software licences priced per GPU-hour skipped (NVIDIA AI Enterprise, on top of the GPU): B111824, B111827"
        in report.notes
    )


def test_oci_generation_labels_are_gpu_items_of_unknown_shape() -> None:
    """getcomputable/gpu-index tests/fixtures/observatory/oracle/products_usd.json
    @38e515c00ad4c186cddb1ca004f18168cfd0d223 (lastUpdated 2026-08-14) prices six items the shape
    table does not map: "OCI - Compute - GPU - H100T" (B109480, serviceCategory "Compute - GPU -
    Other"), "Compute - Bare Metal GPU Standard - X7" and "Compute - Virtual Machine GPU Standard -
    X7" (B88517, B88518), "Compute - GPU Standard - V2" (B89734), "Compute - GPU - E3" (B92740) and
    "OCI - Compute - GPU - E4" (B93544). Oracle's own list makes each a GPU item: metric "GPU Per
    Hour" in a "Compute - GPU" category, like the H100's B98415; none is a product other than a GPU
    (unlike the NVIDIA AI Enterprise licences, whose names say so). X7, E3 and E4 name CPU
    generations, V2 a shape version, and H100T a variant; no Oracle document reachable here (the
    compute shapes page, the price list, the SDKs) says which shape, GPU model or GPU count each
    prices, so each stays quarantined with its price and listed in unknown_gpus: reported, never
    mapped by a guess (public trackers that label them do so by inference and disagree: one calls V2
    the P100 and E3 the V100, while the list prices V2 below E3 and E4 at E3's price). Own items in
    that structure, prices invented."""
    items = [
        _oci_item("B109480", "OCI - Compute - GPU - H100T", 9.9, category="Compute - GPU - Other"),
        _oci_item("B88517", "Compute - Bare Metal GPU Standard - X7", 1.1),
        _oci_item("B88518", "Compute - Virtual Machine GPU Standard - X7", 1.1),
        _oci_item("B89734", "Compute - GPU Standard - V2", 2.5),
        _oci_item("B92740", "Compute - GPU - E3", 2.9),
        _oci_item("B93544", "OCI - Compute - GPU - E4", 2.9),
        _oci_item("B98415", "Oracle Cloud Infrastructure - Compute - GPU - H100", 9.5),
    ]
    result = parse_page(
        "oci", json.dumps({"lastUpdated": "2026-08-14T09:09:55.872Z", "items": items}).encode()
    )
    assert_contract_offers(
        result,
        [offer("oci", "h100-sxm", "NVIDIA H100 80GB", 8, 80.0, "on_demand", 9.5, 76.0)],
    )
    report = result.report
    labels = [item["displayName"] for item in items[:-1]]
    assert (report.rows_seen, report.unknown_gpus, report.notes) == (7, labels, [])
    assert [row.raw.split(" | ")[:2] for row in report.rejected] == [
        [item["partNumber"], item["displayName"]] for item in items[:-1]
    ]
    assert all("GPU and shape unknown" in row.reason for row in report.rejected)
