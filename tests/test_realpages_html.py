"""The HTML parsers on pages the providers really served, and on the project's own pages in the same
structures.

Each real capture (``../shared/realpages/<provider>/``, provenance in its SOURCES.md; never copied
into the repository) is asserted offer by offer in every field of the parse contract, written out
here from reading the file (per-GPU prices divided by hand, the arithmetic in a comment), never
copied from the parser's output. The tests skip, saying so, when ``../shared`` is absent (a fresh
clone); the project's own fixtures in the same structures (invented rows and prices) run everywhere.
"""

from __future__ import annotations

import datetime as dt

from realpages import real_capture

from gpuprice.scrapers.offer import CONTRACT_FIELDS, ParseResult
from gpuprice.scrapers.registry import parse_page
from parser_support import fixture_dir


def offer(
    provider: str,
    gpu: str,
    gpu_raw: str,
    gpu_count: int,
    vram_gb: float | None,
    tier: str,
    usd_per_gpu_hour: float,
    usd_per_instance_hour: float | None = None,
    *,
    price_basis: str = "list",
    commitment_months: int | None = None,
    effective_from: str | None = None,
    region: str | None = None,
    community: bool = False,
    available: bool | None = None,
) -> dict:
    """One expected offer in every field of the parse contract."""
    return {
        "provider": provider,
        "gpu": gpu,
        "gpu_raw": gpu_raw,
        "gpu_count": gpu_count,
        "vram_gb": vram_gb,
        "tier": tier,
        "community": community,
        "commitment_months": commitment_months,
        "usd_per_gpu_hour": usd_per_gpu_hour,
        "usd_per_instance_hour": usd_per_instance_hour,
        "region": region,
        "available": available,
        "effective_from": effective_from,
        "price_basis": price_basis,
    }


def assert_contract_offers(result: ParseResult, expected: list[dict]) -> None:
    got = [o.contract_dict() for o in result.offers]
    assert [tuple(sorted(o)) for o in expected] == [tuple(CONTRACT_FIELDS_SORTED)] * len(expected)
    assert got == expected


CONTRACT_FIELDS_SORTED = sorted(CONTRACT_FIELDS)


# ----- CoreWeave: the Webflow div grid -----------------------------------------------------------------
# getcomputable/gpu-index tests/fixtures/observatory/coreweave/pricing.html @055204ad, 2026-08-22,
# its North America section. Columns: GPU Model | GPU Count | VRAM (GB) | vCPUs | System RAM (GB) |
# Local Storage (TB) | On-Demand Price (Per Hour) | Spot Price (Per Hour) | Inference Single GPU
# Price (Per Hour). Prices are per instance-hour; per GPU = instance / GPU count. "4^1" is 4 GPUs with
# footnote 1. GB300 NVL72 is "Contact sales" / "N/A": no offer. The inference column restates the
# on-demand price per GPU to the cent (49.24 / 8 = 6.155 shown as $6.16): not another offer.
NA = "North America"


def _cw(gpu: str, raw: str, count: int, vram: float, tier: str, per_gpu: float, instance: float) -> dict:
    return offer("coreweave", gpu, raw, count, vram, tier, per_gpu, instance, region=NA)


COREWEAVE_REAL = [
    _cw("gb200", "NVIDIA GB200 NVL72", 4, 186.0, "on_demand", 10.5, 42.0),  # 42.00 / 4
    _cw("b300", "NVIDIA HGX B300", 8, 270.0, "spot", 4.48, 35.84),  # on-demand: Contact sales; 35.84 / 8
    _cw("b200", "NVIDIA HGX B200", 8, 180.0, "on_demand", 8.6, 68.8),  # 68.80 / 8
    _cw("b200", "NVIDIA HGX B200", 8, 180.0, "spot", 4.2638, 34.11),  # 34.11 / 8 = 4.26375
    _cw("rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 8, 96.0, "on_demand", 2.5, 20.0),
    _cw("rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 8, 96.0, "spot", 1.3863, 11.09),
    _cw("h100-sxm", "NVIDIA HGX H100", 8, 80.0, "on_demand", 6.155, 49.24),  # 49.24 / 8
    _cw("h100-sxm", "NVIDIA HGX H100", 8, 80.0, "spot", 2.4638, 19.71),  # 19.71 / 8 = 2.46375
    _cw("h200-sxm", "NVIDIA HGX H200", 8, 141.0, "on_demand", 6.305, 50.44),  # 50.44 / 8
    _cw("h200-sxm", "NVIDIA HGX H200", 8, 141.0, "spot", 2.6163, 20.93),  # 20.93 / 8 = 2.61625
    _cw("gh200", "NVIDIA GH200", 1, 96.0, "on_demand", 6.5, 6.5),  # spot N/A
    _cw("l40", "NVIDIA L40", 8, 48.0, "on_demand", 1.25, 10.0),
    _cw("l40", "NVIDIA L40", 8, 48.0, "spot", 0.7838, 6.27),  # 6.27 / 8 = 0.78375
    _cw("l40s", "NVIDIA L40S", 8, 48.0, "on_demand", 2.25, 18.0),
    _cw("l40s", "NVIDIA L40S", 8, 48.0, "spot", 0.985, 7.88),
    _cw("a100-80gb-sxm", "NVIDIA A100", 8, 80.0, "on_demand", 2.7, 21.6),  # 8 x 80 GB: the HGX (SXM) part
    _cw("a100-80gb-sxm", "NVIDIA A100", 8, 80.0, "spot", 1.2063, 9.65),  # 9.65 / 8 = 1.20625
]


def test_coreweave_real_webflow_div_grid() -> None:
    page = real_capture("coreweave", "getcomputable_coreweave_pricing_2026-08_NA-section.html")
    result = parse_page("coreweave", page)
    assert_contract_offers(result, COREWEAVE_REAL)
    report = result.report
    assert (report.parse_strategy, report.rows_seen, report.unpriced_rows) == ("structured", 11, 1)
    assert report.rejected == [] and report.unknown_gpus == []


def test_coreweave_own_webflow_div_grid_with_two_regions() -> None:
    """tests/fixtures/pages/coreweave/webflow_div_grid.html: the same structure, two region sections."""
    result = parse_page("coreweave", (fixture_dir("coreweave") / "webflow_div_grid.html").read_bytes())
    eu = "Europe"
    assert_contract_offers(
        result,
        [
            _cw("b300", "NVIDIA HGX B300", 8, 270.0, "spot", 4.2, 33.6),  # 33.60 / 8
            _cw("h100-sxm", "NVIDIA HGX H100", 8, 80.0, "on_demand", 5.99, 47.92),  # 47.92 / 8
            _cw("h100-sxm", "NVIDIA HGX H100", 8, 80.0, "spot", 2.3, 18.4),
            _cw("gh200", "NVIDIA GH200", 1, 96.0, "on_demand", 5.9, 5.9),
            _cw("a100-80gb-sxm", "NVIDIA A100", 8, 80.0, "on_demand", 2.6, 20.8),
            _cw("a100-80gb-sxm", "NVIDIA A100", 8, 80.0, "spot", 1.17, 9.36),
            offer("coreweave", "h100-sxm", "NVIDIA HGX H100", 8, 80.0, "on_demand", 5.99, 47.92, region=eu),
            offer("coreweave", "h100-sxm", "NVIDIA HGX H100", 8, 80.0, "spot", 2.37, 18.96, region=eu),
            offer("coreweave", "l40s", "NVIDIA L40S", 8, 48.0, "on_demand", 2.15, 17.2, region=eu),
        ],
    )
    assert result.report.unpriced_rows == 1 and result.report.rejected == []


# ----- Nebius: an escaped flight-data fragment ----------------------------------------------------------
# getcomputable/gpu-index tests/fixtures/observatory/nebius/prices.html @055204ad, 2026-08-22: a piece of
# a self.__next_f.push string (every quote escaped), blocks "highlight-table-block" whose table.content
# rows are headed Item | vCPUs | RAM, GB | Preemptible, GPU-hour | On-demand, GPU-hour. Prices are per
# GPU-hour as written; "HGX" rows are 8-GPU nodes. GB300/GB200 NVL72 read "––" and "[Contact us](...)":
# no offer. The L40S rows are "from" floors (the cheapest host size), two hosts (Intel, AMD), both kept.
# The CPU-only table ("AMD EPYC Genoa") and the storage table hold no GPU.


def _nb(gpu: str, raw: str, count: int, tier: str, price: float, basis: str = "list", **kw: object) -> dict:
    return offer("nebius", gpu, raw, count, None, tier, price, price_basis=basis, **kw)  # type: ignore[arg-type]


NEBIUS_REAL = [
    _nb("b300", "NVIDIA HGX B300", 8, "spot", 4.3),
    _nb("b300", "NVIDIA HGX B300", 8, "on_demand", 7.85),
    _nb("b200", "NVIDIA HGX B200", 8, "spot", 3.95),
    _nb("b200", "NVIDIA HGX B200", 8, "on_demand", 7.15),
    _nb("h200-sxm", "NVIDIA HGX H200", 8, "spot", 2.45),
    _nb("h200-sxm", "NVIDIA HGX H200", 8, "on_demand", 4.5),
    _nb("h100-sxm", "NVIDIA HGX H100", 8, "spot", 2.15),
    _nb("h100-sxm", "NVIDIA HGX H100", 8, "on_demand", 3.85),
    _nb("rtx-pro-6000", "NVIDIA RTX PRO 6000", 1, "spot", 0.95),
    _nb("rtx-pro-6000", "NVIDIA RTX PRO 6000", 1, "on_demand", 1.8),
    _nb("l40s", "NVIDIA L40S with Intel CPU", 1, "spot", 0.9, "from"),
    _nb("l40s", "NVIDIA L40S with Intel CPU", 1, "on_demand", 1.82, "from"),
    _nb("l40s", "NVIDIA L40S with AMD CPU", 1, "spot", 0.74, "from"),
    _nb("l40s", "NVIDIA L40S with AMD CPU", 1, "on_demand", 1.55, "from"),
]


def test_nebius_real_flight_fragment() -> None:
    page = real_capture("nebius", "getcomputable_nebius_prices_rsc_fragment_2026-08.html")
    result = parse_page("nebius", page)
    assert_contract_offers(result, NEBIUS_REAL)
    report = result.report
    assert (report.parse_strategy, report.rows_seen, report.unpriced_rows) == ("structured", 9, 2)
    assert report.rejected == [] and report.unknown_gpus == []


def test_nebius_own_flight_fragment() -> None:
    """tests/fixtures/pages/nebius/flight_fragment.html: the same escaped fragment structure."""
    result = parse_page("nebius", (fixture_dir("nebius") / "flight_fragment.html").read_bytes())
    assert_contract_offers(
        result,
        [
            _nb("b300", "NVIDIA HGX B300", 8, "spot", 4.1),
            _nb("b300", "NVIDIA HGX B300", 8, "on_demand", 7.6),
            _nb("h200-sxm", "NVIDIA HGX H200", 8, "spot", 2.3),
            _nb("h200-sxm", "NVIDIA HGX H200", 8, "on_demand", 4.4),
            _nb("l40s", "NVIDIA L40S with AMD CPU", 1, "spot", 0.7, "from"),
            _nb("l40s", "NVIDIA L40S with AMD CPU", 1, "on_demand", 1.49, "from"),
        ],
    )
    assert result.report.unpriced_rows == 1 and result.report.unknown_gpus == []


def test_nebius_own_server_rendered_div_tables_with_a_schedule_and_a_preemptible_table() -> None:
    """tests/fixtures/pages/nebius/server_rendered_div_table.html: div tables named by class, an
    "Effective January 15, 2027" column (scheduled prices) and a preemptible table priced "from"."""
    page = (fixture_dir("nebius") / "server_rendered_div_table.html").read_bytes()
    result = parse_page("nebius", page, observed_on=dt.date(2026, 12, 1))
    scheduled = "2027-01-15"
    assert_contract_offers(
        result,
        [
            _nb("b200", "NVIDIA HGX B200", 8, "on_demand", 6.9),
            _nb("b200", "NVIDIA HGX B200", 8, "on_demand", 6.4, effective_from=scheduled),
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "on_demand", 3.7),
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "on_demand", 3.3, effective_from=scheduled),
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "spot", 1.95, "from"),  # the preemptible table
            _nb("l40s", "NVIDIA L40S with Intel CPU", 1, "spot", 0.85, "from"),
        ],
    )
    assert result.report.unpriced_rows == 1  # GB200 NVL72: Contact us


def test_nebius_own_apollo_state_page_with_the_table_in_a_json_string() -> None:
    """tests/fixtures/pages/nebius/apollo_state.html: __NEXT_DATA__ whose Apollo state keeps the page's
    blocks as a JSON string (a layout a public tracker's Nebius scraper reads)."""
    result = parse_page("nebius", (fixture_dir("nebius") / "apollo_state.html").read_bytes())
    assert_contract_offers(
        result,
        [
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "spot", 2.05),
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "on_demand", 3.7),
            _nb("b200", "NVIDIA HGX B200", 8, "spot", 3.8),
            _nb("b200", "NVIDIA HGX B200", 8, "on_demand", 6.95),
        ],
    )
    assert result.report.unpriced_rows == 1 and result.report.rejected == []


# ----- Lambda: the 1-Click Clusters section ------------------------------------------------------------
# getcomputable/gpu-index tests/fixtures/observatory/lambda/pricing.html @055204ad, characters 0-5661,
# 2026-08-22: tables Plan | DURATION | GPU COUNT | PRICE/GPU/HR* | Action, one tab per GPU. Each priced
# row is a contract for 2 weeks to 1 year at that GPU count: reserved, basis "contract", the shortest
# term (two weeks) in whole months rounded up = 1. "256+" is 256 GPUs or more (the offer's count: 256).
# "1 year+ | 16+ | —" rows say "Talk to our team": unpriced.


def _cluster(gpu: str, raw: str, count: int, price: float) -> dict:
    return offer(
        "lambda", gpu, raw, count, None, "reserved", price, price_basis="contract", commitment_months=1
    )


LAMBDA_REAL = [
    _cluster("b200", "NVIDIA HGX B200", 16, 9.86),
    _cluster("b200", "NVIDIA HGX B200", 64, 9.36),
    _cluster("b200", "NVIDIA HGX B200", 256, 8.87),
    _cluster("h100-sxm", "NVIDIA H100", 16, 6.16),  # 1-Click Clusters are HGX (SXM) H100 systems
    _cluster("h100-sxm", "NVIDIA H100", 64, 5.85),
    _cluster("h100-sxm", "NVIDIA H100", 256, 5.54),
]


def test_lambda_real_one_click_clusters_are_contract_prices() -> None:
    page = real_capture("lambda", "getcomputable_lambda_pricing_2026-08-22_1click-section.html")
    result = parse_page("lambda", page)
    assert_contract_offers(result, LAMBDA_REAL)
    report = result.report
    assert (report.parse_strategy, report.rows_seen, report.unpriced_rows) == ("structured", 8, 2)
    assert report.rejected == [] and report.unknown_gpus == []
    assert [o.sku for o in result.offers][:1] == ["16x NVIDIA HGX B200 [cluster, 2 weeks – 1 year]"]


def test_lambda_own_page_clusters_and_a100_in_two_memory_sizes() -> None:
    """tests/fixtures/pages/lambda/one_click_clusters.html: clusters (also copied as escaped HTML in the
    island script: read once), and 8x NVIDIA A100 SXM with 80 GB and with 40 GB, both kept."""
    result = parse_page("lambda", (fixture_dir("lambda") / "one_click_clusters.html").read_bytes())
    assert_contract_offers(
        result,
        [
            _cluster("b200", "NVIDIA HGX B200", 16, 9.4),
            _cluster("b200", "NVIDIA HGX B200", 128, 8.95),
            _cluster("h100-sxm", "NVIDIA H100", 32, 5.9),
            _cluster("h100-sxm", "NVIDIA H100", 256, 5.25),
            offer("lambda", "h100-sxm", "NVIDIA H100 SXM", 8, 80.0, "on_demand", 3.79),
            offer("lambda", "a100-80gb-sxm", "NVIDIA A100 SXM", 8, 80.0, "on_demand", 2.49),
            offer("lambda", "a100-40gb", "NVIDIA A100 SXM", 8, 40.0, "on_demand", 1.89),
            offer("lambda", "gh200", "NVIDIA GH200", 1, 96.0, "on_demand", 1.59),
            offer("lambda", "a10", "NVIDIA A10", 1, 24.0, "on_demand", 0.79),
        ],
    )
    skus = [o.sku for o in result.offers]
    assert skus[5:7] == ["8x NVIDIA A100 SXM 80GB", "8x NVIDIA A100 SXM"]  # the name alone says 40 GB
    assert result.report.rejected == [] and result.report.unpriced_rows == 2


# ----- Crusoe: the Webflow GPU grid under "GPU model | On-demand | Current spot" ----------------------------
# getcomputable/gpu-index tests/fixtures/observatory/crusoe/pricing.html @055204ad, characters 0-15564,
# 2026-08-22. Prices are per GPU-hour ("$4.29/GPU-hr"); the card's tags add VRAM and form factor to
# the name. Every "Current spot" cell reads "Contact sales", as do GB200, B200 and MI355X on-demand:
# three unpriced cards, six on-demand offers.


def _cr(gpu: str, raw: str, vram: float, tier: str, price: float) -> dict:
    return offer("crusoe", gpu, raw, 1, vram, tier, price)


CRUSOE_REAL = [
    _cr("h200-sxm", "NVIDIA H200 141GB HGX", 141.0, "on_demand", 4.29),
    _cr("h100-sxm", "NVIDIA H100 80GB HGX", 80.0, "on_demand", 3.9),
    _cr("a100-80gb-sxm", "NVIDIA A100 80GB SXM", 80.0, "on_demand", 2.3),
    _cr("a100-80gb-pcie", "NVIDIA A100 80GB PCIe", 80.0, "on_demand", 2.0),
    _cr("l40s", "NVIDIA L40S 48GB", 48.0, "on_demand", 1.5),
    _cr("mi300x", "AMD MI300X 192GB", 192.0, "on_demand", 3.45),
]


def test_crusoe_real_webflow_grid() -> None:
    page = real_capture("crusoe", "getcomputable_crusoe_pricing_2026-08_gpu-section.html")
    result = parse_page("crusoe", page)
    assert_contract_offers(result, CRUSOE_REAL)
    report = result.report
    assert (report.parse_strategy, report.rows_seen, report.unpriced_rows) == ("structured", 9, 3)
    assert report.rejected == [] and report.unknown_gpus == []


def test_crusoe_own_grid_reads_current_spot_as_spot() -> None:
    """tests/fixtures/pages/crusoe/webflow_current_spot.html: the same grid with spot prices."""
    result = parse_page("crusoe", (fixture_dir("crusoe") / "webflow_current_spot.html").read_bytes())
    assert_contract_offers(
        result,
        [
            _cr("h200-sxm", "NVIDIA H200 141GB HGX", 141.0, "on_demand", 4.1),
            _cr("h200-sxm", "NVIDIA H200 141GB HGX", 141.0, "spot", 2.05),
            _cr("h100-sxm", "NVIDIA H100 80GB HGX", 80.0, "on_demand", 3.75),
            _cr("h100-sxm", "NVIDIA H100 80GB HGX", 80.0, "spot", 1.6),
            _cr("a100-80gb-pcie", "NVIDIA A100 80GB PCIe", 80.0, "on_demand", 1.95),
            _cr("mi300x", "AMD MI300X 192GB", 192.0, "on_demand", 3.3),
            _cr("mi300x", "AMD MI300X 192GB", 192.0, "spot", 1.45),
        ],
    )
    assert result.report.rejected == [] and result.report.unpriced_rows == 1


# ----- Massed Compute: server-component (flight) records ------------------------------------------------
# getcomputable/gpu-index tests/fixtures/observatory/massedcompute/pricing_rsc_excerpt.html @055204ad,
# characters 0-3900, 2026-08-22: two escaped records of one instance, its phone card
# ("B300 SXM6-mobile-x 8-0") and its table row ("B300 SXM6-x 8-0"): count badge "×" "8", "$$52.80"
# (RSC's escape of "$52.80") "/hr" per instance-hour, vCPU 280, RAM 2800 GB, Storage 6000. One offer:
# 52.80 / 8 = 6.60 per GPU-hour.


def test_massedcompute_real_flight_records() -> None:
    page = real_capture(
        "massedcompute", "getcomputable_massedcompute_pricing_rsc_excerpt_2026-08_first2records.html"
    )
    result = parse_page("massedcompute", page)
    assert_contract_offers(
        result, [offer("massedcompute", "b300", "B300 SXM6", 8, None, "on_demand", 6.6, 52.8)]
    )
    only = result.offers[0]
    assert (only.sku, only.vcpus, only.ram_gb, only.storage_gb) == ("8x B300 SXM6", 280.0, 2800.0, 6000.0)
    assert result.report.rejected == [] and result.report.rows_seen == 1


def test_massedcompute_own_flight_page_split_over_chunks() -> None:
    """tests/fixtures/pages/massedcompute/app_router_flight.html: the payload in three push chunks,
    "H100 (80GB)" (Massed Compute's 80 GB PCIe card) in two sizes, "B300 SXM6 x8", a sold-out record."""
    page = (fixture_dir("massedcompute") / "app_router_flight.html").read_bytes()
    result = parse_page("massedcompute", page)
    assert_contract_offers(
        result,
        [
            offer(
                "massedcompute", "h100-pcie", "H100 (80GB)", 1, 80.0, "on_demand", 2.35, 2.35
            ),  # memory in the name
            offer("massedcompute", "h100-pcie", "H100 (80GB)", 8, 80.0, "on_demand", 2.35, 18.8),  # 18.80 / 8
            offer("massedcompute", "b300", "B300 SXM6", 8, None, "on_demand", 6.2, 49.6),  # 49.60 / 8
        ],
    )
    assert result.report.unpriced_rows == 1 and result.report.rejected == []  # A6000 x2: Sold out
