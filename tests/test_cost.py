"""Run cost (the guide's table) and the cost per successful checkpoint, term by term."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from gpuprice.models.cost import (
    DEFAULT_COST_TERMS,
    HOURS_PER_MONTH,
    CostTermArrays,
    CostTerms,
    checkpoint_cost,
    checkpoint_costs,
    checkpoint_count,
    hours_for_tokens,
    resumable_checkpoint_gb,
    run_cost,
)

# seed-guide.md section 4 (assumed hours; whole-config prices of 2026-10-29 / GPU count).
GUIDE_TABLE = [
    (1, 0.92, 10, 10, 9.20),
    (1, 2.32, 10, 10, 23.20),
    (1, 4.61, 24, 24, 110.64),
    (2, 3.07, 12, 24, 73.68),
    (8, 3.07, 21, 168, 515.76),
    (8, 4.61, 21, 168, 774.48),
]


@pytest.mark.parametrize(("gpus", "price", "hours", "gpu_hours", "cost"), GUIDE_TABLE)
def test_run_cost_reproduces_the_guide(
    gpus: int, price: float, hours: float, gpu_hours: float, cost: float
) -> None:
    result = run_cost(gpus, hours, price)
    assert result.gpu_hours == gpu_hours
    assert result.cost_usd == cost


def test_run_cost_without_a_price_has_no_cost() -> None:
    assert run_cost(4, 2.5, None).cost_usd is None
    with pytest.raises(ValueError):
        run_cost(0, 1, 1.0)


def test_hours_for_tokens() -> None:
    # 1e9 tokens at 1,000 tok/s/GPU on 8 GPUs = 125,000 s.
    assert hours_for_tokens(1e9, 1000, 8) == pytest.approx(125_000 / 3600)


def test_checkpoint_count_is_progress_with_a_final_checkpoint() -> None:
    assert checkpoint_count(100e9, 10e9) == 10
    assert checkpoint_count(101e9, 10e9) == 11
    assert checkpoint_count(1e9, 10e9) == 1
    np.testing.assert_array_equal(checkpoint_count(np.array([5.0, 20.0]), 10.0), [1, 2])


def test_resumable_checkpoint_sizes() -> None:
    assert resumable_checkpoint_gb(70e9, "full", "adamw", "bf16-mixed") == pytest.approx(840)
    assert resumable_checkpoint_gb(70e9, "full", "adamw8bit", "bf16-mixed") == pytest.approx(420)
    assert resumable_checkpoint_gb(8e9, "full", "adamw", "bf16-true") == pytest.approx(48)
    assert resumable_checkpoint_gb(
        70e9, "qlora", "adamw", "bf16-mixed", adapter_params=200e6
    ) == pytest.approx(2.4)


def _one(**overrides):
    base = dict(
        gpus=8,
        usd_per_gpu_hour=3.0,
        compute_hours=20.0,
        checkpoints=10,
        checkpoint_gb=100.0,
        model_gb=140.0,
        dataset_gb=50.0,
    )
    return checkpoint_cost(**{**base, **overrides})


def test_each_term_separately() -> None:
    terms = CostTerms(
        storage_usd_per_gb_month=0.2,
        checkpoints_retained=2,
        data_usd_per_gb=0.1,
        startup_hours=0.5,
        model_download_gb_per_hour=280.0,
        failures_per_node_hour=0.0,
        engineer_usd_per_hour=100.0,
        engineer_hours=2.0,
        reusable_checkpoint_value_usd=30.0,
    )
    cost = _one(terms=terms)
    assert cost.gpu_usd == pytest.approx(8 * 3.0 * 20)
    assert cost.orchestration_usd == pytest.approx(8 * 3.0 * (0.5 + 140 / 280))
    assert cost.rework_usd == 0.0
    assert cost.wall_hours == pytest.approx(21.0)
    assert cost.storage_usd == pytest.approx(0.2 * 100 * 2 * 21.0 / HOURS_PER_MONTH)
    assert cost.data_usd == pytest.approx(5.0)
    assert cost.engineer_usd == pytest.approx(200.0)
    assert cost.reusable_value_usd == 30.0
    expected_total = cost.gpu_usd + cost.orchestration_usd + cost.storage_usd + 5.0 + 200.0 - 30.0
    assert cost.total_usd == pytest.approx(expected_total)
    assert cost.cost_per_checkpoint_usd == pytest.approx(expected_total / 10)


def test_spot_rework_is_half_an_interval_plus_restart_per_preemption_at_first_order() -> None:
    terms = CostTerms(spot_preemptions_per_node_hour=0.001, failures_per_node_hour=0.0, restart_hours=0.5)
    cost = _one(spot=True, terms=terms)
    interval = 20.0 / 10
    first_order = 0.001 * 20.0 * (interval / 2 + 0.5)
    assert cost.rework_usd == pytest.approx(8 * 3.0 * first_order, rel=0.01)
    assert cost.expected_interruptions == pytest.approx(0.02, rel=0.01)


def test_frequent_preemption_compounds_and_sparse_checkpoints_hurt() -> None:
    terms = CostTerms(spot_preemptions_per_node_hour=0.2)
    frequent = _one(spot=True, terms=terms, checkpoints=40)
    sparse = _one(spot=True, terms=terms, checkpoints=2)
    on_demand = _one(spot=False, terms=terms, checkpoints=2)
    assert sparse.rework_usd > 5 * frequent.rework_usd
    assert on_demand.rework_usd < 0.01 * sparse.rework_usd
    # Compounding: more than the first-order estimate when lambda x interval is large.
    first_order = 0.2 * 20.0 * (10.0 / 2 + terms.restart_hours) * 8 * 3.0
    assert sparse.rework_usd > first_order


def test_multi_node_jobs_fail_more_often_and_community_hosts_more_still() -> None:
    one_node = _one(nodes=1)
    eight_nodes = _one(nodes=8, gpus=64)
    assert eight_nodes.expected_interruptions == pytest.approx(8 * one_node.expected_interruptions, rel=0.01)
    assert _one(community=True).expected_interruptions > 10 * one_node.expected_interruptions


def test_vectorised_matches_scalar() -> None:
    out = checkpoint_costs(
        gpus=np.array([1, 8, 64]),
        nodes=np.array([1, 1, 8]),
        usd_per_gpu_hour=np.array([2.0, 3.0, 2.5]),
        compute_hours=np.array([10.0, 5.0, 40.0]),
        checkpoints=np.array([1, 5, 20]),
        spot=np.array([False, True, False]),
        community=np.array([True, False, False]),
        checkpoint_gb=10.0,
        model_gb=16.0,
        dataset_gb=1.0,
    )
    for i, (g, n, p, h, c, s, cm) in enumerate(
        [
            (1, 1, 2.0, 10.0, 1, False, True),
            (8, 1, 3.0, 5.0, 5, True, False),
            (64, 8, 2.5, 40.0, 20, False, False),
        ]
    ):
        single = checkpoint_cost(
            gpus=g,
            nodes=n,
            usd_per_gpu_hour=p,
            compute_hours=h,
            checkpoints=c,
            spot=s,
            community=cm,
            checkpoint_gb=10.0,
            model_gb=16.0,
            dataset_gb=1.0,
        )
        assert out["cost_per_checkpoint_usd"][i] == pytest.approx(single.cost_per_checkpoint_usd)
        assert out["total_usd"][i] == pytest.approx(single.total_usd)


def test_per_row_terms_match_one_call_per_workload() -> None:
    cheap = CostTerms(storage_usd_per_gb_month=0.02, spot_preemptions_per_node_hour=0.2, restart_hours=1.0)
    terms = [DEFAULT_COST_TERMS, cheap]
    index = np.array([0, 1, 1, 0])
    common = dict(
        gpus=np.array([8, 8, 1, 1]),
        nodes=np.array([1, 1, 1, 1]),
        usd_per_gpu_hour=np.array([2.0, 2.0, 3.0, 3.0]),
        compute_hours=np.array([30.0, 30.0, 5.0, 5.0]),
        checkpoints=np.array([3, 3, 1, 1]),
        spot=np.array([True, True, False, False]),
        community=np.array([False, False, True, True]),
    )
    mixed = checkpoint_costs(
        **common,
        checkpoint_gb=np.array([100.0, 50.0, 50.0, 100.0]),
        model_gb=16.0,
        dataset_gb=1.0,
        terms=CostTermArrays(terms, index),
    )
    for row, which in enumerate(index):
        single = checkpoint_costs(
            **{k: v[row : row + 1] for k, v in common.items()},
            checkpoint_gb=[100.0, 50.0][which],
            model_gb=16.0,
            dataset_gb=1.0,
            terms=terms[which],
        )
        for name, values in single.items():
            assert mixed[name][row] == pytest.approx(values[0]), name


def test_terms_are_validated_and_overridable() -> None:
    assert DEFAULT_COST_TERMS.engineer_usd_per_hour == 0.0
    assert DEFAULT_COST_TERMS.reusable_checkpoint_value_usd == 0.0
    changed = DEFAULT_COST_TERMS.with_overrides({"storage_usd_per_gb_month": 0.02})
    assert changed.storage_usd_per_gb_month == 0.02
    assert changed.startup_hours == DEFAULT_COST_TERMS.startup_hours
    with pytest.raises(ValidationError):
        DEFAULT_COST_TERMS.with_overrides({"storage_usd_per_gb_month": -1})
    with pytest.raises(ValidationError):
        DEFAULT_COST_TERMS.with_overrides({"storage_per_gb": 1})
