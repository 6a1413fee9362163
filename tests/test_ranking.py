"""rank_offers on hand-made offers, and once through a real warehouse (offers_as_of -> rankings)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpuprice.models.ranking import (
    DATA_PARALLEL_EFFICIENCY,
    MIN_USEFUL_RUN_HOURS,
    RANKING_COLUMNS,
    rank_offers,
)
from gpuprice.models.workloads import Workload, get_workload, load_workloads

DAY = dt.date(2026, 10, 29)


def offer(provider: str, sku: str, gpu: str, count: int, price: float, **extra: object) -> dict[str, object]:
    row: dict[str, object] = dict(
        snapshot_date=DAY,
        provider=provider,
        sku=sku,
        gpu=gpu,
        gpu_raw=gpu,
        gpu_count=count,
        vram_gb=None,
        tier="on_demand",
        community=False,
        commitment_months=None,
        region=None,
        usd_per_gpu_hour=price,
        usd_per_instance_hour=price * count,
        available=True,
        effective_from=None,
        price_basis="list",
    )
    row.update(extra)
    return row


def frame(*rows: dict[str, object]) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def workload(**fields: object) -> Workload:
    base = dict(
        name="test",
        model="meta-llama/Llama-3.1-8B",
        method="lora",
        micro_batch=4,
        grad_checkpointing=True,
        tokens=100e6,
        checkpoint_interval_tokens=10e6,
    )
    return Workload.model_validate({**base, **fields})


@pytest.fixture(autouse=True)
def _no_user_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUPRICE_WORKLOADS", raising=False)


def test_columns_ranks_and_skipped_offers() -> None:
    offers = frame(
        offer("lambda", "1x-h100", "h100-sxm", 1, 3.29),
        offer("runpod", "a100", "a100-80gb-sxm", 1, 1.19),
        offer("runpod", "mystery", "unknown", 1, 0.10),
        offer(
            "nebius", "b200-next", "b200", 1, 0.50, effective_from=dt.date(2026, 11, 1)
        ),  # not yet in force
        offer("nebius", "h200-now", "h200-sxm", 1, 2.50, effective_from=dt.date(2026, 10, 1)),
        offer("crusoe", "free", "l40s", 1, 0.0),
    )
    ranked = rank_offers(offers, [workload()], DAY)
    assert tuple(ranked.columns) == RANKING_COLUMNS
    assert set(ranked["sku"]) == {"1x-h100", "a100", "h200-now"}
    assert list(ranked["rank"]) == [1, 2, 3]
    assert ranked["cost_per_checkpoint_usd"].is_monotonic_increasing
    assert (ranked["snapshot_date"] == DAY).all() and (ranked["price_snapshot_date"] == DAY).all()


def test_empty_inputs_give_the_columns() -> None:
    assert tuple(rank_offers(pd.DataFrame(), [workload()], DAY).columns) == RANKING_COLUMNS
    only_unknown = frame(offer("runpod", "x", "unknown", 1, 1.0))
    assert rank_offers(only_unknown, [workload()], DAY).empty


def test_costs_hours_and_terms_are_consistent() -> None:
    ranked = rank_offers(frame(offer("lambda", "a100", "a100-80gb-sxm", 1, 1.29)), [workload()], DAY)
    row = ranked.iloc[0]
    assert row["hours"] == pytest.approx(100e6 / (row["tokens_per_sec_per_gpu"] * 3600))
    assert row["run_cost_usd"] == pytest.approx(round(row["hours"] * 1.29, 2))
    terms = json.loads(row["cost_terms"])
    parts = ("gpu_usd", "orchestration_usd", "rework_usd", "storage_usd", "data_usd", "engineer_usd")
    assert terms["total_usd"] == pytest.approx(
        sum(terms[p] for p in parts) - terms["reusable_value_usd"], abs=0.02
    )
    assert terms["checkpoints"] == 10
    assert row["cost_per_checkpoint_usd"] == pytest.approx(terms["total_usd"] / 10, abs=0.01)
    assert terms["wall_hours"] > row["hours"]  # start-up and download are billed too


def test_multi_gpu_only_in_sold_counts() -> None:
    full_70b = get_workload("llama-3.1-70b-full-adamw")
    offers = frame(
        offer("lambda", "1x-h100", "h100-sxm", 1, 3.0),
        offer("lambda", "2x-h100", "h100-sxm", 2, 3.0),
        offer("lambda", "8x-h100", "h100-sxm", 8, 3.0),
    )
    ranked = rank_offers(offers, [full_70b], DAY)
    # One or two H100s never hold a 70B AdamW fine-tune; whole nodes are combined instead.
    assert set(ranked["sku"]) == {"8x-h100"}
    row = ranked.iloc[0]
    assert row["nodes"] >= 2 and row["gpu_count"] == 8 * row["nodes"]
    assert row["sharding"] in ("zero2", "zero3")


def test_continued_pretraining_spans_nodes_and_meets_the_deadline() -> None:
    pretraining = get_workload("llama-3.1-8b-continued-pretraining")
    offers = frame(
        offer("coreweave", "hgx-h100", "h100-sxm", 8, 2.5), offer("lambda", "1x-h100", "h100-sxm", 1, 2.0)
    )
    ranked = rank_offers(offers, [pretraining], DAY)
    assert list(ranked["sku"]) == ["hgx-h100"]
    relaxed = rank_offers(offers, [pretraining.model_copy(update={"deadline_hours": None})], DAY).iloc[0]
    urgent = rank_offers(offers, [pretraining.model_copy(update={"deadline_hours": 60.0})], DAY).iloc[0]
    assert relaxed["nodes"] == pretraining.min_nodes  # no deadline: fewest nodes that fit
    assert urgent["nodes"] > ranked.iloc[0]["nodes"] >= relaxed["nodes"]
    assert json.loads(urgent["cost_terms"])["wall_hours"] <= 60.0
    hopeless = pretraining.model_copy(update={"deadline_hours": 1.0})
    assert rank_offers(offers, [hopeless], DAY).empty  # late offers are excluded by default ...
    impossible = rank_offers(offers, [hopeless], DAY, include_infeasible=True).iloc[0]
    assert impossible["nodes"] == pretraining.max_nodes  # ... or shown marked: the fastest
    assert any(w.startswith("deadline-missed:") for w in impossible["warnings"])
    assert impossible["excluded_by"] == ["deadline"]


def test_spot_needs_more_nodes_for_the_same_deadline() -> None:
    pretraining = get_workload("llama-3.1-8b-continued-pretraining")
    offers = frame(
        offer("coreweave", "od", "h100-sxm", 8, 2.5),
        offer("coreweave", "spot", "h100-sxm", 8, 1.2, tier="spot"),
    )
    ranked = rank_offers(offers, [pretraining], DAY).set_index("sku")
    assert ranked.at["spot", "nodes"] > ranked.at["od", "nodes"]
    for sku in ("od", "spot"):
        assert json.loads(ranked.at[sku, "cost_terms"])["wall_hours"] <= pretraining.deadline_hours
        assert not any(w.startswith("deadline-missed") for w in ranked.at[sku, "warnings"])


def test_max_gpus_caps_scale_out() -> None:
    pretraining = get_workload("llama-3.1-8b-continued-pretraining").model_copy(
        update={"deadline_hours": 1.0}
    )
    ranked = rank_offers(
        frame(offer("coreweave", "hgx-h100", "h100-sxm", 8, 2.5)),
        [pretraining],
        DAY,
        max_gpus=32,
        include_infeasible=True,
    )
    assert ranked.iloc[0]["gpu_count"] == 32


def _codes(ranked: pd.DataFrame, sku: str) -> set[str]:
    warnings = ranked.loc[ranked["sku"] == sku, "warnings"].iloc[0]
    return {w.split(":", 1)[0] for w in warnings}


def test_warnings() -> None:
    long_qlora = workload(
        model="meta-llama/Llama-2-7b-hf", method="qlora", tokens=2e9, checkpoint_interval_tokens=1e8
    )
    offers = frame(
        offer("runpod", "4090", "rtx-4090", 1, 0.34, community=True),
        offer("lambda", "8x-h100", "h100-sxm", 8, 2.99),
        offer("coreweave", "a100", "a100-80gb-sxm", 1, 1.5, snapshot_date=DAY - dt.timedelta(days=5)),
        offer("crusoe", "h100", "h100-sxm", 1, 2.0),
    )
    ranked = rank_offers(offers, [long_qlora], DAY, stale_providers={"crusoe"})
    assert _codes(ranked, "4090") == {"no-ecc"}
    assert _codes(ranked, "8x-h100") == {"whole-node"}
    assert _codes(ranked, "a100") == set()  # 5 days old: current (the limit is 14), no warning
    assert ranked.loc[ranked["sku"] == "a100", "price_age_days"].iloc[0] == 5
    assert _codes(ranked, "h100") == {"stale-provider"}
    text = ranked.loc[ranked["sku"] == "4090", "warnings"].iloc[0]
    assert any("h job" in w for w in text)  # says how long the job is

    full_8b = get_workload("llama-3.1-8b-full")
    full = rank_offers(
        frame(
            offer("coreweave", "a100-pcie", "a100-80gb-pcie", 8, 1.2),
            offer("coreweave", "h100-spot", "h100-sxm", 8, 1.5, tier="spot"),
            offer("lambda", "h100", "h100-sxm", 8, 2.99),
        ),
        [
            full_8b.model_copy(
                update={"tokens": 5e9, "checkpoint_interval_tokens": 2.5e9, "deadline_hours": None}
            )
        ],
        DAY,
    )
    assert "pcie-multi-gpu" in _codes(full, "a100-pcie")
    assert "spot-long-run" in _codes(full, "h100-spot")
    assert _codes(full, "h100") == set()
    # Rows own their warning lists.
    lists = list(full["warnings"])
    assert len({id(x) for x in lists}) == len(lists)


def test_spot_and_community_pay_for_interruptions() -> None:
    full_8b = get_workload("llama-3.1-8b-full").model_copy(update={"tokens": 5e9, "deadline_hours": None})
    offers = frame(
        offer("coreweave", "od", "h100-sxm", 8, 2.0),
        offer("coreweave", "spot", "h100-sxm", 8, 2.0, tier="spot"),
        offer("runpod", "community", "h100-sxm", 8, 2.0, community=True),
    )
    ranked = rank_offers(offers, [full_8b], DAY).set_index("sku")
    rework = {sku: json.loads(ranked.at[sku, "cost_terms"])["rework_usd"] for sku in ranked.index}
    assert rework["od"] < rework["community"] < rework["spot"]
    assert list(ranked.sort_values("rank").index) == ["od", "community", "spot"]
    assert ranked["run_cost_usd"].nunique() == 1  # same GPU hours; the difference is risk


def test_ties_break_by_wall_time_then_input_order() -> None:
    offers = frame(
        offer("b-provider", "same-1", "h100-sxm", 1, 3.0),
        offer("a-provider", "same-2", "h100-sxm", 1, 3.0),
    )
    ranked = rank_offers(offers, [workload()], DAY)
    assert list(ranked["sku"]) == ["same-1", "same-2"]
    rng = np.random.default_rng(7)
    gpus = rng.choice(["h100-sxm", "a100-80gb-sxm", "l40s", "rtx-4090", "h200-sxm"], 300)
    many = frame(
        *[
            offer("p", f"s{i}", g, int(c), float(p))
            for i, (g, c, p) in enumerate(zip(gpus, rng.choice([1, 2, 8], 300), rng.uniform(0.5, 4, 300)))
        ]
    )
    ranked = rank_offers(many, [workload()], DAY)
    walls = ranked["cost_terms"].map(lambda t: json.loads(t)["wall_hours"]).to_numpy()
    cost = ranked["cost_per_checkpoint_usd"].round(6).to_numpy()
    assert all((cost[i], walls[i]) <= (cost[i + 1], walls[i + 1]) for i in range(len(ranked) - 1))


def test_offer_memory_overrides_the_catalog_when_plausible() -> None:
    big = workload(model="meta-llama/Llama-3.1-70B", method="lora", micro_batch=1)  # ~150 GB
    offers = frame(
        offer("lambda", "gh200-96", "gh200", 1, 1.5),
        offer("lambda", "gh200-144", "gh200", 1, 1.5, vram_gb=144.0),
    )
    ranked = rank_offers(offers, [big], DAY)
    assert "gh200-96" not in set(ranked["sku"])
    nonsense = frame(
        offer("lambda", "gh200-typo", "gh200", 1, 1.5, vram_gb=1152.0)
    )  # instance total, not per GPU
    assert rank_offers(nonsense, [big], DAY).empty


def test_every_builtin_workload_ranks_a_realistic_market() -> None:
    offers = frame(
        offer("runpod", "4090", "rtx-4090", 1, 0.69, community=True),
        offer("lambda", "a100", "a100-80gb-sxm", 1, 1.29),
        offer("lambda", "8x-h100", "h100-sxm", 8, 2.99),
        offer("runpod", "h200", "h200-sxm", 1, 3.59),
        offer("massedcompute", "8x-b200", "b200", 8, 5.43),
        offer("crusoe", "l40s", "l40s", 1, 1.0),
    )
    workloads = load_workloads()
    ranked = rank_offers(offers, workloads, DAY)
    assert set(ranked["workload"]) == {w.name for w in workloads}
    for _, group in ranked.groupby("workload"):
        assert list(group["rank"]) == list(range(1, len(group) + 1))
    qlora_70b = ranked[ranked["workload"] == "llama-3.1-70b-qlora"]
    assert "4090" not in set(qlora_70b["sku"])  # 24 GB cannot hold 35 GB of 4-bit weights


def test_top_builds_only_the_first_rows_of_each_workload_as_the_whole_ranking_has_them() -> None:
    offers = frame(
        offer("runpod", "4090", "rtx-4090", 1, 0.69, community=True),
        offer("runpod", "4090-spot", "rtx-4090", 1, 0.35, tier="spot"),
        offer("lambda", "a100", "a100-80gb-sxm", 1, 1.29),
        offer("lambda", "8x-h100", "h100-sxm", 8, 2.99),
        offer("runpod", "h200", "h200-sxm", 1, 3.59),
        offer("massedcompute", "8x-b200", "b200", 8, 5.43),
        offer("crusoe", "l40s", "l40s", 1, 1.0, observed_on=DAY - dt.timedelta(days=60)),
    )
    workloads = load_workloads()
    flags = dict(include_infeasible=True, include_stale=True)
    whole = rank_offers(offers, workloads, DAY, **flags)
    for top in (1, 2):
        first = rank_offers(offers, workloads, DAY, top=top, **flags)
        expected = whole[whole["rank"] <= top].reset_index(drop=True)
        assert len(first) == len(expected) > len(workloads) * (top - 1)
        pd.testing.assert_frame_equal(first, expected)
    best = rank_offers(offers, workloads, DAY, top=1)
    assert list(best["workload"]) == [w.name for w in workloads] and set(best["rank"]) == {1}
    with pytest.raises(ValueError, match="top must be at least 1"):
        rank_offers(offers, workloads, DAY, top=0)


@pytest.mark.slow
def test_ranking_a_large_random_day() -> None:
    """Twenty thousand random offers rank for every workload (the speed target is in bench/)."""
    rng = np.random.default_rng(3)
    n = 20_000
    gpus = rng.choice(
        ["h100-sxm", "a100-80gb-sxm", "l40s", "rtx-4090", "b200", "h200-sxm", "a100-80gb-pcie"], n
    )
    offers = pd.DataFrame(
        dict(
            snapshot_date=DAY,
            provider=rng.choice(["runpod", "lambda", "nebius"], n),
            sku=[f"s{i}" for i in range(n)],
            gpu=gpus,
            gpu_count=rng.choice([1, 2, 4, 8], n),
            vram_gb=np.nan,
            tier=rng.choice(["on_demand", "spot"], n),
            community=False,
            commitment_months=None,
            usd_per_gpu_hour=rng.uniform(0.3, 6, n),
            effective_from=None,
            price_basis="list",
        )
    )
    workloads = load_workloads()
    # Its speed is the bench figure sweep.configs_per_s (make bench), not a unit test.
    ranked = rank_offers(offers, workloads, DAY)
    assert len(ranked) > n


def test_through_the_warehouse(tmp_path: Path) -> None:
    """offers_as_of output ranks, and the result is accepted by the workload_rankings table."""
    from gpuprice.scrapers.offer import Offer
    from gpuprice.warehouse import queries, writes
    from gpuprice.warehouse.connection import connect_writer

    con = connect_writer(tmp_path / "w.duckdb")
    offers = [
        Offer(
            provider="lambda",
            sku="gpu_1x_a100",
            gpu="a100-80gb-sxm",
            gpu_raw="A100 80GB",
            gpu_count=1,
            usd_per_gpu_hour=1.29,
        ),
        Offer(
            provider="lambda",
            sku="gpu_8x_h100",
            gpu="h100-sxm",
            gpu_raw="H100 SXM",
            gpu_count=8,
            usd_per_gpu_hour=2.99,
            usd_per_instance_hour=23.92,
        ),
        Offer(
            provider="lambda",
            sku="reserved_h100",
            gpu="h100-sxm",
            gpu_raw="H100 SXM",
            gpu_count=8,
            tier="reserved",
            commitment_months=12,
            usd_per_gpu_hour=2.10,
        ),
    ]
    writes.replace_snapshot_partition(
        con,
        provider="lambda",
        snapshot_date=DAY,
        offers=offers,
        source="archive",
        raw_sha256=None,
        parser_version=None,
    )
    frame_in = queries.offers_as_of(con, DAY)
    ranked = rank_offers(
        frame_in, load_workloads()[:3], DAY, stale_providers=queries.stale_providers(con, DAY)
    )
    assert not ranked.empty
    assert ranked.loc[ranked["sku"] == "reserved_h100", "commitment_months"].iloc[0] == 12
    assert writes.replace_rankings(con, DAY, ranked) == len(ranked)
    stored = con.execute(
        "SELECT warnings, json_extract(cost_terms, '$.checkpoints')::INT FROM workload_rankings WHERE rank = 1"
    ).fetchall()
    assert len(stored) == 3 and all(isinstance(w, list) for w, _ in stored)
    con.close()


# ------------------------------------------------------------------ right-sizing and limits (issue 14)
def test_more_gpus_shorten_the_run_at_most_at_the_stated_efficiency() -> None:
    offers = frame(offer("lambda", "1x", "h100-sxm", 1, 3.0), offer("lambda", "8x", "h100-sxm", 8, 3.0))
    ranked = rank_offers(offers, [workload(tokens=1e9, checkpoint_interval_tokens=1e8)], DAY).set_index("sku")
    one, eight = ranked.loc["1x"], ranked.loc["8x"]
    assert eight["hours"] >= one["hours"] / (8 * DATA_PARALLEL_EFFICIENCY) * (1 - 1e-9)
    assert eight["tokens_per_sec_per_gpu"] <= one["tokens_per_sec_per_gpu"] * DATA_PARALLEL_EFFICIENCY + 1e-6
    # At the same price per GPU-hour one card is cheaper: the node pays 8x start-up for a 90% speed-up.
    assert ranked.loc["1x", "rank"] < ranked.loc["8x", "rank"]
    assert any(w.startswith("whole-node:") for w in eight["warnings"])


def test_a_short_job_does_not_get_faster_on_a_whole_node() -> None:
    offers = frame(offer("lambda", "1x", "b200", 1, 5.0), offer("nebius", "8x", "b200", 8, 1.0, tier="spot"))
    short = workload(tokens=5e6, checkpoint_interval_tokens=1e6)
    ranked = rank_offers(offers, [short], DAY).set_index("sku")
    one_hours = ranked.loc["1x", "hours"]
    assert one_hours < MIN_USEFUL_RUN_HOURS
    assert ranked.loc["8x", "hours"] == pytest.approx(one_hours)  # the other 7 GPUs idle, paid for
    # 8 GPUs x the same hours at a fifth of the price, plus 8x the start-up: not cheaper here.
    assert ranked.loc["1x", "rank"] == 1


def test_a_whole_node_ranks_first_only_when_cheaper_per_checkpoint() -> None:
    job = workload(tokens=1e9, checkpoint_interval_tokens=1e8)

    def best(node_price: float) -> pd.Series:
        offers = frame(
            offer("lambda", "1x", "h100-sxm", 1, 3.0), offer("nebius", "8x", "h100-sxm", 8, node_price)
        )
        return rank_offers(offers, [job], DAY).iloc[0]

    assert best(3.0)["sku"] == "1x"
    cheap_node = best(1.0)
    assert cheap_node["sku"] == "8x" and any(w.startswith("whole-node:") for w in cheap_node["warnings"])
    single = rank_offers(frame(offer("lambda", "1x", "h100-sxm", 1, 3.0)), [job], DAY).iloc[0]
    assert cheap_node["cost_per_checkpoint_usd"] < single["cost_per_checkpoint_usd"]


def test_limits_exclude_or_mark_offers() -> None:
    offers = frame(
        offer("lambda", "1x", "h100-sxm", 1, 3.0),
        offer("lambda", "8x", "h100-sxm", 8, 2.0),
        offer("coreweave", "16x", "h100-sxm", 16, 2.0),
        offer("crusoe", "spot", "h100-sxm", 1, 1.0, tier="spot"),
    )
    job = workload(tokens=1e9, checkpoint_interval_tokens=1e8)
    every = rank_offers(offers, [job], DAY, include_infeasible=True).set_index("sku")
    assert every.loc["16x", "excluded_by"] == ["max_nodes"]  # 2 nodes for a one-node job
    assert any(w.startswith("over-node-limit:") for w in every.loc["16x", "warnings"])
    assert "16x" not in set(rank_offers(offers, [job], DAY)["sku"])
    capped = rank_offers(offers, [job.model_copy(update={"max_gpus": 1})], DAY)
    assert set(capped["sku"]) == {"1x", "spot"}
    budget = float(every.loc["1x", "total_cost_usd"]) + 0.01  # the column is rounded to cents
    cheap = rank_offers(offers, [Workload.model_validate({**job.model_dump(), "budget_usd": budget})], DAY)
    assert (cheap["total_cost_usd"] <= budget).all() and "1x" in set(cheap["sku"])
    marked = rank_offers(offers, [job.model_copy(update={"budget_usd": 1.0})], DAY, include_infeasible=True)
    assert all("budget" in codes for codes in marked["excluded_by"])
    assert all(any(w.startswith("over-budget:") for w in ws) for ws in marked["warnings"])
    picked = Workload.model_validate({**job.model_dump(), "tier": "spot", "providers": ["crusoe"]})
    assert list(rank_offers(offers, [picked], DAY)["sku"]) == ["spot"]


def test_workload_framework_and_compile_reach_memory_and_throughput() -> None:
    # The ranking's sweep builds each workload's own setup: torchtitan + compile (fused elementwise
    # kernels, FSDP2's fp32 master) must give other per-GPU figures and speeds than hf.
    offers = frame(offer("lambda", "h100x8", "h100-sxm", 8, 2.99))
    kw = dict(method="full", grad_checkpointing=None, activation_checkpointing="selective", micro_batch=1)
    hf = rank_offers(offers, [workload(name="hf", framework="hf", **kw)], DAY)
    titan = rank_offers(offers, [workload(name="titan", framework="torchtitan", compile=True, **kw)], DAY)
    assert not hf.empty and not titan.empty
    hf_row, titan_row = hf.iloc[0], titan.iloc[0]
    assert hf_row["sharding"] == titan_row["sharding"]
    assert titan_row["per_gpu_gb"] < hf_row["per_gpu_gb"]
    assert titan_row["tokens_per_sec_per_gpu"] > hf_row["tokens_per_sec_per_gpu"]


def test_prices_older_than_the_limit_are_never_ranked_first() -> None:
    """The one rule of "now": a price whose page is more than 14 days old is not current. It is
    left out, or with include_stale ranked after every current offer, marked and warned."""
    job = workload(max_gpus=1)
    offers = frame(
        offer("vastai", "old-cheap", "h100-sxm", 1, 1.00, observed_on=DAY - dt.timedelta(days=171)),
        offer("lambda", "edge", "h100-sxm", 1, 1.10, observed_on=DAY - dt.timedelta(days=14)),
        offer("runpod", "fresh", "h100-sxm", 1, 2.69, observed_on=DAY),
        offer("runpod", "fresh-infeasible", "h100-sxm", 8, 2.69, observed_on=DAY),
    )
    ranked = rank_offers(offers, [job], DAY)
    assert list(ranked["sku"]) == ["edge", "fresh"]  # 14 days old is still current
    assert list(ranked["price_age_days"]) == [14, 0]

    both = rank_offers(offers, [job], DAY, include_stale=True, include_infeasible=True)
    assert list(both["sku"]) == ["edge", "fresh", "fresh-infeasible", "old-cheap"]
    old = both[both["sku"] == "old-cheap"].iloc[0]
    assert list(old["excluded_by"]) == ["price_age"] and old["rank"] == 4
    assert old["price_age_days"] == 171
    assert any(w.startswith("stale-price: price observed on") and "171 days" in w for w in old["warnings"])
    assert list(both.loc[both["sku"] == "fresh-infeasible", "excluded_by"].iloc[0]) == ["max_gpus"]

    wider = rank_offers(offers, [job], DAY, max_price_age_days=200)
    assert wider.iloc[0]["sku"] == "old-cheap" and list(wider.iloc[0]["excluded_by"]) == []
    assert rank_offers(offers, [job], DAY, max_price_age_days=0)["sku"].tolist() == ["fresh"]


def test_long_full_fine_tunes_rank_interruptible_capacity_last_unless_checkpointing_is_proven() -> None:
    """The guide's rule: spot and community capacity rank after reserved/on-demand for a full
    fine-tune longer than the workload's long_run_hours (8 h), even when cheaper, unless the
    workload declares checkpointing: proven; the warning shows interruptions and rework."""
    long_full = get_workload("llama-3.1-8b-full").model_copy(
        update={"tokens": 5e9, "checkpoint_interval_tokens": 5e8, "deadline_hours": None}
    )
    offers = frame(
        offer("coreweave", "spot", "h100-sxm", 8, 1.0, tier="spot"),
        offer("runpod", "community", "h100-sxm", 8, 1.1, community=True),
        offer("lambda", "od", "h100-sxm", 8, 2.99),
    )
    ranked = rank_offers(offers, [long_full], DAY)
    wall = json.loads(ranked.iloc[0]["cost_terms"])["wall_hours"]
    assert wall > long_full.long_run_hours  # the rule applies to this job
    assert list(ranked["sku"]) == ["od", "spot", "community"]
    warning = next(w for w in ranked.iloc[1]["warnings"] if w.startswith("spot-long-run:"))
    assert (
        "interruptions" in warning and "of rework" in warning and "ranked after reserved/on-demand" in warning
    )
    assert any(w.startswith("spot-long-run:") for w in ranked.iloc[2]["warnings"])  # community too

    proven = rank_offers(offers, [long_full.model_copy(update={"checkpointing": "proven"})], DAY)
    assert proven["sku"].iloc[0] == "spot"  # cheapest per checkpoint wins again
    short = rank_offers(offers, [long_full.model_copy(update={"long_run_hours": 10 * wall})], DAY)
    assert short["sku"].iloc[0] == "spot"
    lora = rank_offers(offers, [workload(tokens=5e9, checkpoint_interval_tokens=5e8)], DAY)
    assert lora["sku"].iloc[0] == "spot"  # adapters: the rule is for full fine-tunes


@pytest.mark.parametrize(
    "fields",
    [
        dict(method="full", optimizer="adamw8bit", precision="bf16-true"),
        dict(method="full", framework="torchtune", precision="bf16-true"),
        dict(
            method="full",
            framework="torchtitan",
            activation_checkpointing="selective",
            grad_checkpointing=None,
        ),
        dict(method="qlora"),  # hf QLoRA's fp32 residual stream
    ],
)
def test_rank_and_estimate_give_one_speed_for_the_same_job(fields: dict[str, object]) -> None:
    """The ranking's sweep and `estimate` (predict_throughput) count the optimizer step (the job's
    optimizer, its framework's AdamW kernel and gradient clip)
    and the other terms the same way, so a job's tokens/s does not depend on which one answers."""
    from gpuprice.models.frameworks import DEFAULTS
    from gpuprice.models.throughput import predict_throughput

    job = workload(model="meta-llama/Llama-3.2-1B", **fields)
    ranked = rank_offers(frame(offer("lambda", "h100x1", "h100-sxm", 1, 2.99)), [job], DAY)
    assert len(ranked) == 1
    row = ranked.iloc[0]
    setup = job.setup()
    speed = predict_throughput(
        setup.arch,
        setup.method,
        "h100-sxm",
        1,
        setup.seq_len,
        setup.micro_batch,
        setup.grad_checkpointing,
        setup.precision,
        str(row["sharding"]),
        compile=setup.compile,
        framework=setup.framework,
        grad_accum=setup.grad_accum,
        optimizer=setup.optimizer,
        adamw_step=DEFAULTS[setup.framework].adamw_step,
        attention=setup.attention,
        lora_targets=setup.lora_targets,
        keeps_scores=False,
        selective_checkpointing=setup.activation_checkpointing == "selective",
    )
    assert row["tokens_per_sec_per_gpu"] == pytest.approx(speed.tokens_per_sec_per_gpu, rel=1e-6)
