"""One cheapest-region rule: ``offers_as_of`` returns each offer once, at its cheapest region, the
region analytics.cheapest_region names, and the ranking ranks it there (issue 38: the rule runs in
SQL, where the rows are, so the ranking reads one row per offer instead of every region's)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pandas as pd
from test_warehouse import con, table, write  # noqa: F401  (con: the fixture, both engines)

from conftest import D4, make_offer
from gpuprice.models.ranking import rank_offers
from gpuprice.models.workloads import get_workload
from gpuprice.warehouse.queries import offers_as_of
from gpuprice.warehouse.sql_files import CHEAPEST_REGION_ORDER, REGION_PEERS, sql


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_view_and_the_ranking_spell_one_rule() -> None:
    # Both name the rule by its placeholders (one text in warehouse/sql_files.py), never spell it out.
    root = Path(__file__).resolve().parents[1] / "warehouse/sql"
    view = _flat((root / "views/v_cheapest_region.sql").read_text())
    assert "PARTITION BY snapshot_date, {region_peers} ORDER BY {cheapest_region_order}) = 1" in view
    assert "WINDOW w AS (PARTITION BY snapshot_date, {region_peers})" in view
    query = _flat((root / "queries/offers_as_of_range.sql").read_text())
    assert "PARTITION BY _as_of, {region_peers} ORDER BY {cheapest_region_order}) = 1" in query
    expanded = _flat(sql("views/v_cheapest_region"))
    assert f"PARTITION BY snapshot_date, {REGION_PEERS} ORDER BY {CHEAPEST_REGION_ORDER}) = 1" in expanded


def _aws(sku: str, region: str | None, price: float, **extra: object):
    return make_offer(
        provider="aws", sku=sku, gpu="h100-sxm", gpu_count=8, region=region, usd_per_gpu_hour=price, **extra
    )


def test_each_offer_once_at_its_cheapest_region_as_the_view_and_the_ranking_name_it(con) -> None:  # noqa: F811
    write(
        con,
        "aws",
        D4,
        [
            _aws("p5.48xlarge", "eu-north-1", 7.3616),
            _aws("p5.48xlarge", "us-west-2", 6.88),  # equal to us-east-1: the first region wins
            _aws("p5.48xlarge", "us-east-1", 6.88),
            _aws("p5.48xlarge", "ap-south-1", 2.9, tier="spot", interruption_bucket="<5%"),
            _aws("p5.48xlarge", "us-east-1", 2.5, tier="spot", interruption_bucket=">20%"),
            _aws("p5e.48xlarge", "us-west-2", 7.9),  # the cheaper region is not the first by name
            _aws("p5e.48xlarge", "ap-northeast-1", 9.1),
        ],
    )
    write(con, "lambda", D4, [make_offer(gpu_count=8, sku="gpu_8x_h100_sxm", usd_per_gpu_hour=2.99)])
    offers = offers_as_of(con, D4)
    chosen = [
        (p, sku, tier, region, price)
        for p, sku, tier, region, price in offers[
            ["provider", "sku", "tier", "region", "usd_per_gpu_hour"]
        ].itertuples(index=False)
    ]
    assert chosen == [
        ("aws", "p5.48xlarge", "on_demand", "us-east-1", 6.88),
        ("aws", "p5.48xlarge", "spot", "us-east-1", 2.5),
        ("aws", "p5e.48xlarge", "on_demand", "us-west-2", 7.9),
        ("lambda", "gpu_8x_h100_sxm", "on_demand", None, 2.99),
    ]
    assert offers.loc[offers["tier"] == "spot", "interruption_bucket"].tolist() == [
        ">20%"
    ]  # the region's own
    view = table(
        con,
        "SELECT provider, sku, tier, cheapest_region, CAST(usd_per_gpu_hour AS DOUBLE) "
        "FROM analytics.cheapest_region WHERE snapshot_date = ? ORDER BY ALL",
        D4,
    )
    assert sorted(chosen, key=str) == sorted(view, key=str)
    job = get_workload("llama-3.1-8b-qlora").model_copy(update={"tier": None, "providers": None})
    ranked = rank_offers(offers, [job], D4)
    named = {(r.provider, r.sku, r.tier): (r.region, r.usd_per_gpu_hour) for r in ranked.itertuples()}
    assert len(named) == len(ranked)  # never the same offer from two regions
    assert named == {(p, sku, tier): (region, price) for p, sku, tier, region, price in chosen}


def test_a_scheduled_price_counts_in_its_region_before_the_cheapest_is_chosen(con) -> None:  # noqa: F811
    later = D4 + dt.timedelta(days=2)
    write(
        con,
        "aws",
        D4,
        [
            _aws("p5.48xlarge", "us-east-1", 6.0),
            _aws("p5.48xlarge", "us-east-1", 7.5, effective_from=later),  # us-east-1 dearer from then
            _aws("p5.48xlarge", "us-west-2", 6.9),
            _aws("p5.48xlarge", "eu-north-1", 7.2),
            _aws("p5.48xlarge", "eu-north-1", 5.5, effective_from=later),  # eu-north-1 cheaper from then
        ],
    )
    on_the_day = offers_as_of(con, D4)[["region", "usd_per_gpu_hour"]].values.tolist()
    assert on_the_day == [["us-east-1", 6.0]]
    assert table(con, "SELECT cheapest_region FROM analytics.cheapest_region") == [("us-east-1",)]
    assert offers_as_of(con, later)[["region", "usd_per_gpu_hour", "effective_from"]].values.tolist() == [
        ["eu-north-1", 5.5, pd.Timestamp(later)]
    ]
    write(
        con,
        "aws",
        D4,
        [
            _aws("p5.48xlarge", "us-east-1", 6.0),
            _aws("p5.48xlarge", "us-east-1", 7.5, effective_from=later),
            _aws("p5.48xlarge", "us-west-2", 6.9),
        ],
    )
    # the replaced price of us-east-1 (6.0) no longer counts: us-west-2 is the cheapest then
    assert offers_as_of(con, later)[["region", "usd_per_gpu_hour"]].values.tolist() == [["us-west-2", 6.9]]
