"""Accuracy of the throughput model against the public measurements (throughput_public.csv).

Statistic: median absolute percentage error of predicted tokens/s per GPU, over every row that
reports a per-GPU throughput, the fine-tuning rows and the pre-training rows. Guards sit just
above what the calibrated model achieves (models/mfu_calibration.md) so that a change that makes
the model worse fails here. Leave-one-source-out (refit without a source from the priors, score
that source) shows the small parameter set carries over to runs it never saw.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import REPO, TEST_DATA
from gpuprice.models.calibration.throughput_fit import (
    absolute_percentage_errors,
    fit_parameters,
    leave_one_source_out,
)
from gpuprice.models.calibration.throughput_rows import (
    benchmark_case,
    load_benchmark_rows,
    predict_from_benchmark_row,
)
from gpuprice.models.throughput_parameters import CALIBRATED_PARAMETERS, PRIOR_PARAMETERS

PUBLIC_CSV = TEST_DATA / "throughput_public.csv"
# Issue 15: all rows <= 6 %, fine-tuning leave-one-source-out <= 12 %.
TARGET_ALL, TARGET_FINETUNE_LOSO = 0.06, 0.12
# Achieved with CALIBRATED_PARAMETERS (issue 33: only ampere_datacenter and hopper have their own
# efficiency; the optimizer step and per-step collectives are their own terms): 2.95 % overall,
# 5.4 % fine-tuning, 2.5 % pre-training (was 3.4 / 3.7 / 3.3 before the optimizer-step term); with
# the clip's rescale counted and the constants kept, 3.04 % / 5.4 % / 2.54 %.
GUARD_OVERALL, GUARD_FINETUNE, GUARD_PRETRAIN = 0.032, 0.056, 0.028
# Leave-one-source-out (1500 iterations): 9.7 % overall, 6.5 % on the fine-tuning rows since the
# gradient clip counts its rescale (was 6.5 / 7.7; 7.6 / 5.7 before the optimizer-step term). The
# overall figure is the llm-foundry fold (74 of 115 rows refitted from the 41 others), which lands in a
# different local optimum under byte changes of a fraction of a percent on other sources' rows (6.2 %
# -> 8.6 % from one torchtune row's 20 -> 18 B); at 3000 iterations x 4 restarts it is 7.2 % (6.5 %
# before): models/mfu_calibration.md, "The optimizer step's gradient clipping".
GUARD_LOSO_OVERALL = 0.10


@pytest.fixture(scope="module")
def rows() -> list[dict[str, object]]:
    return load_benchmark_rows(str(PUBLIC_CSV))


def _is_finetune(row: dict[str, object]) -> bool:
    return str(row["workload"]).startswith("finetune")


def _errors_via_public_api(rows: list[dict[str, object]]) -> np.ndarray:
    predicted = np.array([predict_from_benchmark_row(r) for r in rows])
    measured = np.array([float(str(r["tokens_per_sec_per_gpu"])) for r in rows])
    return np.abs(predicted / measured - 1)


def test_every_row_with_a_throughput_is_scored(rows: list[dict[str, object]]) -> None:
    assert len(rows) >= 110  # 118 rows, 3 without a per-GPU figure
    assert sum(_is_finetune(r) for r in rows) >= 25


def test_compiled_rows_are_recognised(rows: list[dict[str, object]]) -> None:
    compiled = [r for r in rows if benchmark_case(r).compiled]
    assert len(compiled) == 8  # torchtune's table from "+compile" down
    assert all("torchtune" in str(r["source"]) for r in compiled)


def test_median_error_overall(rows: list[dict[str, object]]) -> None:
    median = float(np.median(_errors_via_public_api(rows)))
    assert median <= TARGET_ALL
    assert median <= GUARD_OVERALL, f"median error {median:.3f} regressed past {GUARD_OVERALL}"


def test_median_error_finetuning_and_pretraining(rows: list[dict[str, object]]) -> None:
    finetune = float(np.median(_errors_via_public_api([r for r in rows if _is_finetune(r)])))
    pretrain = float(np.median(_errors_via_public_api([r for r in rows if not _is_finetune(r)])))
    assert finetune <= GUARD_FINETUNE, f"fine-tuning median error {finetune:.3f}"
    assert pretrain <= GUARD_PRETRAIN, f"pre-training median error {pretrain:.3f}"


def test_batch_scoring_matches_the_row_api(rows: list[dict[str, object]]) -> None:
    np.testing.assert_allclose(absolute_percentage_errors(rows), _errors_via_public_api(rows), rtol=1e-9)


@pytest.mark.slow  # ~7 refits (seconds each on a shared machine)
def test_leave_one_source_out(rows: list[dict[str, object]]) -> None:
    errors = leave_one_source_out(rows, iterations=1500)
    finetune = np.array([_is_finetune(r) for r in rows])
    assert float(np.median(errors[finetune])) <= TARGET_FINETUNE_LOSO
    assert float(np.median(errors)) <= GUARD_LOSO_OVERALL


def test_refit_lands_near_the_shipped_constants(rows: list[dict[str, object]]) -> None:
    fitted = fit_parameters(rows, PRIOR_PARAMETERS, iterations=1500, restarts=2)
    for family, value in CALIBRATED_PARAMETERS.family_efficiency.items():
        assert fitted.family_efficiency[family] == pytest.approx(value, rel=0.1), family
    assert fitted.compile_speedup == pytest.approx(CALIBRATED_PARAMETERS.compile_speedup, rel=0.1)


def test_only_families_with_enough_independent_runs_get_their_own_efficiency(
    rows: list[dict[str, object]],
) -> None:
    from collections import defaultdict

    from gpuprice.models.calibration.throughput_rows import source_of
    from gpuprice.models.gpu_hardware import ASSUMED_FAMILY_RATIOS, MIN_FAMILY_RUNS, MIN_FAMILY_SOURCES

    runs: dict[str, int] = defaultdict(int)
    sources: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        family = benchmark_case(row).profile.family
        runs[family] += 1
        sources[family].add(source_of(row).split()[0])  # a repository's tables are one source
    for family in CALIBRATED_PARAMETERS.family_efficiency:
        assert runs[family] >= MIN_FAMILY_RUNS and len(sources[family]) >= MIN_FAMILY_SOURCES, family
    for family in runs:
        supported = runs[family] >= MIN_FAMILY_RUNS and len(sources[family]) >= MIN_FAMILY_SOURCES
        assert supported or family in ASSUMED_FAMILY_RATIOS, family


def test_priors_alone_are_worse_than_the_calibration(rows: list[dict[str, object]]) -> None:
    prior = float(np.median(absolute_percentage_errors(rows, PRIOR_PARAMETERS)))
    calibrated = float(np.median(absolute_percentage_errors(rows, CALIBRATED_PARAMETERS)))
    assert calibrated < prior


@pytest.mark.slow  # ~7 refits
def test_shipped_throughput_band_is_the_source_out_validation() -> None:
    import json

    from gpuprice.models.calibration.throughput_band_table import band_table
    from gpuprice.models.throughput_band import BAND_PATH

    shipped = json.loads(BAND_PATH.read_text(encoding="utf-8"))
    assert shipped["bands"] == band_table(PUBLIC_CSV)["bands"]


def test_throughput_band_brackets_the_prediction() -> None:
    from gpuprice.models.throughput_band import throughput_band

    band = throughput_band(1000.0)
    assert band["low"] < 1000.0 < band["high"] and band["runs_like"] == "finetune" and band["runs"] >= 25


def test_the_documented_mfu_table_is_what_the_model_predicts() -> None:
    """models/mfu_calibration.md's "Calibrated MFU table" is the output of
    ``python -m gpuprice.models.calibration.mfu_table``: a change to the model regenerates it (the
    table had drifted: its QLoRA column predated hf QLoRA's fp32 residual stream)."""
    from gpuprice.models.calibration.mfu_table import table

    document = (REPO / "models" / "mfu_calibration.md").read_text()
    assert table() in document
