"""The ranking's offer x configuration join (models/ranking/join.py) against the rule it implements:
an offer runs as the configuration of the same workload, card (GPU slug and GB per GPU), GPUs per
offer and interruption class (spot, community), and as nothing when there is none."""

from __future__ import annotations

import numpy as np
from test_ranking import DAY, frame, offer, workload

from gpuprice.models.ranking.configurations import configurations
from gpuprice.models.ranking.distinct import distinct_pairs
from gpuprice.models.ranking.join import match
from gpuprice.models.ranking.limits import CONSTRAINTS, excluded_by
from gpuprice.models.ranking.offers import usable_offers
from gpuprice.models.ranking.workload_table import WorkloadTable


def test_each_pair_runs_as_the_configuration_of_its_key() -> None:
    offers = usable_offers(
        frame(
            offer("lambda", "1x-h100", "h100-sxm", 1, 3.29),
            offer("lambda", "8x-h100", "h100-sxm", 8, 2.99),
            offer("runpod", "h100-spot", "h100-sxm", 1, 1.99, tier="spot"),
            offer("vast", "h100-comm", "h100-sxm", 1, 1.50, community=True),
            offer("vast", "h100-comm-spot", "h100-sxm", 2, 1.20, community=True, tier="spot"),
            offer("runpod", "a100-4x", "a100-80gb-sxm", 4, 1.19),
            offer("nebius", "gh200", "gh200", 1, 1.60, vram_gb=144.0),
            offer("lambda", "gh200", "gh200", 1, 1.50, vram_gb=96.0),
            offer("runpod", "l4", "l4", 1, 0.40),  # 24 GB: the 70B full fine-tune fits no L4
        ),
        DAY,
    )
    jobs = WorkloadTable.of(
        [
            workload(name="small"),
            workload(name="scale-out", method="full", params_b=70, model=None, max_nodes=4),
        ]
    )
    configs = configurations(jobs, offers.cards, np.unique(offers.gpu_count).tolist(), 512)
    assert configs is not None
    pairs = match(offers, configs, len(jobs))

    expected = []
    for w in range(len(jobs)):
        for o in range(len(offers)):
            same = np.flatnonzero(
                (configs.workload == w)
                & (configs.card == offers.card[o])
                & (configs.offer_gpu_count == offers.gpu_count[o])
                & (configs.risk == offers.risk[o])
            )
            assert len(same) <= 1, "a configuration key is unique"
            expected += [(w, o, int(c)) for c in same]
    found = list(zip(pairs.workload.tolist(), pairs.offer.tolist(), pairs.config.tolist()))
    assert found == expected
    matched = {(w, o) for w, o, _ in found}
    assert {o for w, o in matched if w == 0} >= set(range(len(offers) - 1))  # 8B LoRA: every H100/A100/GH200
    assert (1, len(offers) - 1) not in matched  # a 70B full fine-tune: no configuration on one L4
    assert len({offers.risk[o] for w, o in matched if w == 0}) == 4  # every interruption class joined
    assert len(offers.cards) == len(set(offers.cards)) == 5  # two GH200 memories are two cards


def test_distinct_pairs_and_the_limits_a_row_breaks() -> None:
    of_row, first, second = distinct_pairs(np.array([2, 0, 2, 1]), np.array([5, 1, 5, 0]))
    assert list(zip(first.tolist(), second.tolist())) == [(0, 1), (1, 0), (2, 5)]
    assert of_row.tolist() == [2, 0, 2, 1]
    empty, _, _ = distinct_pairs(np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp))
    assert empty.size == 0
    broken = np.array([[False] * 5, [True, False, False, True, False], [False] * 4 + [True]])
    lists = excluded_by(broken)
    assert lists == [[], ["deadline", "budget"], [CONSTRAINTS[-1]]]
    assert lists[0] is not excluded_by(broken)[0]  # each row owns its list
