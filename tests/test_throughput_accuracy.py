"""Accuracy of the throughput model against the public measurements (throughput_public.csv).

Statistic: median absolute percentage error of predicted tokens/s per GPU, over every row that
reports a per-GPU throughput, and over the fine-tuning rows alone. The target is 10 %; the guards
sit just above what the calibrated model achieves (models/mfu_calibration.md) so that a change
that makes the model worse fails here. A deterministic held-out split (every 4th row) is refitted
from the priors to show the small parameter set is not memorising the rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import TEST_DATA
from gpuprice.models.calibration.throughput_rows import (
    absolute_percentage_errors,
    fit_parameters,
    load_benchmark_rows,
    predict_from_benchmark_row,
)
from gpuprice.models.throughput_parameters import CALIBRATED_PARAMETERS, PRIOR_PARAMETERS

PUBLIC_CSV = TEST_DATA / "throughput_public.csv"
TARGET = 0.10
# Achieved with CALIBRATED_PARAMETERS: 3.5 % overall, 7.9 % fine-tuning (see mfu_calibration.md).
GUARD_OVERALL = 0.045
GUARD_FINETUNE = 0.09
# Held-out (fit on 3/4, score the other 1/4): 4.0 % overall, 10.9 % on its 7 fine-tuning rows.
GUARD_HELD_OUT = 0.06


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


def test_median_error_overall(rows: list[dict[str, object]]) -> None:
    errors = _errors_via_public_api(rows)
    median = float(np.median(errors))
    assert median <= TARGET
    assert median <= GUARD_OVERALL, f"median error {median:.3f} regressed past {GUARD_OVERALL}"


def test_median_error_finetuning(rows: list[dict[str, object]]) -> None:
    errors = _errors_via_public_api([r for r in rows if _is_finetune(r)])
    median = float(np.median(errors))
    assert median <= TARGET
    assert median <= GUARD_FINETUNE, f"fine-tuning median error {median:.3f} regressed past {GUARD_FINETUNE}"


def test_batch_scoring_matches_the_row_api(rows: list[dict[str, object]]) -> None:
    np.testing.assert_allclose(absolute_percentage_errors(rows), _errors_via_public_api(rows), rtol=1e-9)


@pytest.mark.slow
def test_held_out_rows(rows: list[dict[str, object]]) -> None:
    train = [r for i, r in enumerate(rows) if i % 4 != 3]
    held_out = [r for i, r in enumerate(rows) if i % 4 == 3]
    fitted = fit_parameters(train, PRIOR_PARAMETERS, iterations=1500, restarts=2)
    errors = absolute_percentage_errors(held_out, fitted)
    assert float(np.median(errors)) <= GUARD_HELD_OUT
    # The refit lands near the shipped constants: they are a property of the data, not of luck.
    for family, value in CALIBRATED_PARAMETERS.family_efficiency.items():
        assert fitted.family_efficiency[family] == pytest.approx(value, rel=0.3), family


def test_priors_alone_are_worse_than_the_calibration(rows: list[dict[str, object]]) -> None:
    prior = float(np.median(absolute_percentage_errors(rows, PRIOR_PARAMETERS)))
    calibrated = float(np.median(absolute_percentage_errors(rows, CALIBRATED_PARAMETERS)))
    assert calibrated < prior
