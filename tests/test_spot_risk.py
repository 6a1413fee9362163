"""Measured spot risk: AWS interruption buckets become the preemption rate of AWS spot offers;
other spot offers keep the documented default; every ranked spot offer names its rate."""

from __future__ import annotations

import json
import math

import pytest
from test_ranking import DAY, frame, offer

from gpuprice.models.cost import DEFAULT_COST_TERMS
from gpuprice.models.ranking import rank_offers
from gpuprice.models.spot_risk import HOURS_PER_MONTH, bucket_rate, buckets, rate_source
from gpuprice.models.workloads import get_workload


def test_buckets_are_the_advisors_five_with_documented_midpoints() -> None:
    assert {label: b.midpoint_pct for label, b in buckets().items()} == {
        "<5%": 2.5,
        "5-10%": 7.5,
        "10-15%": 12.5,
        "15-20%": 17.5,
        ">20%": 25.0,
    }
    # 25 % of instances interrupted in a 730-hour month, as a Poisson rate per node-hour
    assert bucket_rate(">20%") == pytest.approx(-math.log(0.75) / HOURS_PER_MONTH)
    assert bucket_rate("30-40%") is None and bucket_rate(None) is None
    assert (rate_source("<5%"), rate_source(None)) == ("aws-spot-advisor <5%", "default")


def test_aws_spot_uses_its_bucket_rate_others_the_default_and_each_says_which() -> None:
    job = get_workload("llama-3.1-8b-full").model_copy(update={"tokens": 5e9, "deadline_hours": None})
    offers = frame(
        offer(
            "aws",
            "p5.48xlarge",
            "h100-sxm",
            8,
            2.0,
            tier="spot",
            region="us-east-1",
            interruption_bucket=">20%",
        ),
        offer("coreweave", "spot", "h100-sxm", 8, 2.0, tier="spot"),
        offer("coreweave", "od", "h100-sxm", 8, 2.0),
    )
    ranked = rank_offers(offers, [job], DAY).set_index("sku")
    assert ranked.at["p5.48xlarge", "preemption_rate_per_node_hour"] == pytest.approx(bucket_rate(">20%"))
    assert ranked.at["p5.48xlarge", "preemption_rate_source"] == "aws-spot-advisor >20%"
    assert (
        ranked.at["spot", "preemption_rate_per_node_hour"]
        == DEFAULT_COST_TERMS.spot_preemptions_per_node_hour
    )
    assert ranked.at["spot", "preemption_rate_source"] == "default"
    assert math.isnan(ranked.at["od", "preemption_rate_per_node_hour"])
    assert ranked.at["od", "preemption_rate_source"] is None
    rework = {sku: json.loads(ranked.at[sku, "cost_terms"])["rework_usd"] for sku in ranked.index}
    # the measured rate (about one preemption per 2,500 node-hours) is far below the assumed
    # default (one per 20), so AWS spot pays less rework than the default-rated spot offer
    assert rework["od"] < rework["p5.48xlarge"] < rework["spot"]
