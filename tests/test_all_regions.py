"""All-region detail of the hyperscalers (issue 38): every region's price is its own offer, the
GENERATED recordings in scrapers/generated_archive are what bench/all_region_archive.py writes,
and a day of them lands through ``gpuprice run`` with rankings on each offer's cheapest region."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from bench.all_region_archive import (
    AZURE_PAGE_ITEMS,
    AZURE_REGIONS,
    GENERATED_ARCHIVE,
    GENERATED_DATE,
    PROVIDERS,
    document_bytes,
)
from gpuprice.scrapers.providers import aws, azure, oci


def _page(provider: str) -> bytes:
    return gzip.decompress((GENERATED_ARCHIVE / provider / f"{GENERATED_DATE}.json.gz").read_bytes())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_generated_recordings_are_what_the_generator_writes(provider: str) -> None:
    page = _page(provider)
    assert page == document_bytes(provider), "regenerate: python -m bench.all_region_archive"
    readme = (GENERATED_ARCHIVE / "README.md").read_text(encoding="utf-8")
    assert "GENERATED" in readme and "not captures" in readme


def test_aws_keeps_every_regions_price_as_its_own_offer() -> None:
    result = aws.parse(_page("aws"))
    keys = [(o.sku, o.tier, o.region) for o in result.offers]
    assert len(keys) == len(set(keys)) == 1246
    assert {o.region for o in result.offers} == set(aws.REGIONS.values())
    p5 = {
        o.region: o.usd_per_gpu_hour
        for o in result.offers
        if o.sku == "p5.48xlarge" and o.tier == "on_demand"
    }
    assert p5["us-east-1"] == 6.88  # the cited price of the sample archive (2026-01-21)
    assert min(p5.values()) == 6.88 and max(p5.values()) > 1.25 * 6.88 and len(p5) >= 10
    spot = [o for o in result.offers if o.tier == "spot"]
    assert len(spot) == 623 and all(o.interruption_bucket for o in spot)


def test_aws_asks_every_region_and_needs_only_us_east_1() -> None:
    requests = aws.live_requests()
    regional = requests[: len(aws.REGIONS)]
    assert len(regional) == len(aws.REGIONS) == 33
    assert [r.optional for r in regional] == [False] + [True] * 32
    assert "US%20East%20%28N.%20Virginia%29" in regional[0].url
    assert [r.optional for r in requests[len(aws.REGIONS) :]] == [True, True]


def test_aws_a_region_that_did_not_arrive_is_noted_and_the_others_land() -> None:
    document = json.loads(_page("aws"))
    lost = document["pages"][5]
    document["pages"][5] = {
        "url": lost["url"],
        "status": None,
        "body": None,
        "error": "HTTP 503 after 4 attempts",
    }
    result = aws.parse(json.dumps(document).encode())
    assert any("part missing" in note and "HTTP 503" in note for note in result.report.notes)
    lost_region = aws.REGIONS[next(iter(lost["body"]["regions"]))]
    on_demand = {o.region for o in result.offers if o.tier == "on_demand"}
    assert lost_region not in on_demand and len(on_demand) == 32


def test_azure_keeps_every_regions_items_across_pages() -> None:
    document = json.loads(_page("azure"))
    pages = document["pages"]
    assert len(pages) >= 3 and all(len(p["body"]["Items"]) <= AZURE_PAGE_ITEMS for p in pages)
    assert [p["body"]["NextPageLink"] is None for p in pages] == [False] * (len(pages) - 1) + [True]
    result = azure.parse(_page("azure"))
    # 1,584 + 150 of Standard_ND96is_H100_v5 + 4,914 of the 32 older N-series sizes (mapped since, azure/5)
    assert len(result.offers) == 6648
    per_size_region = Counter((o.sku.removesuffix(" (savings plan)"), o.region) for o in result.offers)
    # on-demand, spot, two reservations and two savings plans per size and region
    assert set(per_size_region.values()) == {6}
    assert {o.region for o in result.offers} == {r for r, _ in AZURE_REGIONS}
    h100 = {
        o.region: o.usd_per_gpu_hour
        for o in result.offers
        if o.sku == "Standard_ND96isr_H100_v5" and o.tier == "on_demand"
    }
    assert h100["eastus"] == 12.29 and min(h100.values()) == 12.29  # the cited eastus price (98.32 / 8)


def test_oci_states_one_price_for_all_regions() -> None:
    result = oci.parse(_page("oci"))
    assert len(result.offers) == 13 and {o.region for o in result.offers} == {None}
    assert result.report.rows_seen == 13  # 600 non-GPU products skipped, not counted


@pytest.mark.slow
def test_an_all_region_day_lands_through_run_and_ranks_each_offers_cheapest_region(
    home: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUPRICE_ARCHIVE", str(GENERATED_ARCHIVE))
    day = GENERATED_DATE.isoformat()
    res = cli("run", "--date", day, "--providers", ",".join(PROVIDERS), "--no-reports")
    assert res.code == 0, res.err
    con = duckdb.connect(str(home / "analytics.duckdb"), read_only=True)
    try:
        rows = dict(
            con.execute(
                "SELECT provider, count(*) FROM analytics.analytics.price_snapshots WHERE snapshot_date = ? AND source = 'archive' GROUP BY ALL",
                [dt.date.fromisoformat(day)],
            ).fetchall()
        )
        assert rows == {"aws": 1246, "azure": 6648, "oci": 13}
        view_rows = con.execute(
            "SELECT count(*) FROM analytics.analytics.cheapest_region WHERE snapshot_date = ? AND provider IN ('aws', 'azure')",
            [dt.date.fromisoformat(day)],
        ).fetchall()[0][0]
        cheapest = {
            (p, sku, tier, months): (price, region)
            for p, sku, tier, months, price, region in con.execute(
                """SELECT provider, sku, tier, commitment_months, usd_per_gpu_hour, cheapest_region
                   FROM analytics.analytics.cheapest_region WHERE snapshot_date = ? AND provider IN ('aws', 'azure')""",
                [dt.date.fromisoformat(day)],
            ).fetchall()
        }
    finally:
        con.close()
    assert len(cheapest) == view_rows < (1246 + 6648) / 10  # one row per offer, whatever its regions
    ranked = cli("rank", "--workload", "llama-3.1-70b-qlora", "--providers", "aws,azure", "--format", "json")
    assert ranked.code == 0, ranked.err
    offers = json.loads(ranked.out)
    assert offers
    seen: dict[tuple, str] = {}
    for offer in offers:
        key = (offer["provider"], offer["sku"], offer["tier"], offer["commitment_months"])
        price, region = cheapest[key]
        assert offer["usd_per_gpu_hour"] == pytest.approx(float(price)) and offer["region"] == region, key
        assert seen.setdefault(key, region) == region  # never the same offer from two regions
