"""Regenerate ``models/throughput_band.json``: the out-of-sample error band of tokens/s.

    python -m gpuprice.models.calibration.throughput_band_table

Every run is predicted by constants that never saw its source family: each family of
``throughput_public.csv`` by parameters refitted without it (leave-one-source-family-out, as in
``mfu_calibration.md``), and the holdout families of ``throughput_holdout.csv`` as
:func:`~gpuprice.models.calibration.throughput_holdout.score_holdout` scores them. The band per
method (fine-tuning full / LoRA / QLoRA, pre-training) is the 5th-95th percentile of
measured / predicted - 1. Families whose measured setup the model's inputs cannot express are
left out of the band, with the reason in ``EXCLUDED_FAMILIES`` (they stay in the holdout scores).
A GPU family without its own efficiency borrows a measured one; its band widens on both sides by
the spread of the measured families' efficiencies (``borrowed_family_widening``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gpuprice.models.calibration.throughput_fit import fit_parameters
from gpuprice.models.calibration.throughput_holdout import score_holdout
from gpuprice.models.calibration.throughput_rows import (
    benchmark_case,
    cases_from_benchmarks,
    load_benchmark_rows,
    row_number,
    source_family,
)
from gpuprice.models.throughput import evaluate
from gpuprice.models.throughput_band import BAND_PATH
from gpuprice.models.throughput_parameters import CALIBRATED_PARAMETERS, PRIOR_PARAMETERS

COVERAGE = 0.9
DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
DEFAULT_CSV = DATA / "throughput_public.csv"
HOLDOUT_CSV = DATA / "throughput_holdout.csv"
VALIDATION = "out-of-sample: leave-one-source-family-out and unseen-family holdout"
# None today: universal-llm-trainer's runs (SDPA with a padding mask, QLoRA loaded in fp32), once
# left out, are expressed by --attention sdpa at micro-batch 2 and --precision fp32 / bf16-true.
EXCLUDED_FAMILIES: dict[str, str] = {}


def kind_of(workload: str, method: str) -> str:
    """The band a run belongs to: ``pretrain``, or the fine-tuning method (full, lora, qlora)."""
    return method if workload.startswith("finetune") else "pretrain"


def _source_out_ratios(rows: Sequence[Mapping[str, object]], iterations: int) -> list[tuple[str, float]]:
    """(band key, measured / predicted - 1) of every public row, its family left out of the fit."""
    families = [source_family(r) for r in rows]
    cases = [benchmark_case(r) for r in rows]
    out: list[tuple[str, float]] = []
    for family in sorted(set(families)):
        train = [r for r, f in zip(rows, families, strict=True) if f != family]
        test = [i for i, f in enumerate(families) if f == family]
        fitted = fit_parameters(train, PRIOR_PARAMETERS, iterations=iterations, restarts=2)
        predicted = evaluate(cases_from_benchmarks([cases[i] for i in test]), fitted).tokens_per_sec_per_gpu
        for i, value in zip(test, predicted, strict=True):
            measured = row_number(rows[i], "tokens_per_sec_per_gpu")
            assert measured is not None
            out.append((kind_of(str(rows[i]["workload"]), cases[i].method), measured / float(value) - 1.0))
    return out


def _band(values: Sequence[float]) -> dict[str, Any]:
    tail = (1.0 - COVERAGE) / 2.0
    return {
        "runs": len(values),
        "low": round(float(np.quantile(values, tail)), 4),
        "high": round(float(np.quantile(values, 1.0 - tail)), 4),
    }


def borrowed_family_widening() -> float:
    """How far apart the measured GPU families' efficiencies are (max / min - 1): a family that
    borrows one of them could be like either."""
    measured = list(CALIBRATED_PARAMETERS.family_efficiency.values())
    return round(max(measured) / min(measured) - 1.0, 4)


def band_table(
    csv_path: Path = DEFAULT_CSV, holdout_path: Path | None = HOLDOUT_CSV, iterations: int = 1500
) -> dict[str, Any]:
    public = load_benchmark_rows(str(csv_path))
    ratios = _source_out_ratios(public, iterations)
    if holdout_path is not None:
        held = [
            r for r in load_benchmark_rows(str(holdout_path)) if source_family(r) not in EXCLUDED_FAMILIES
        ]
        for s in score_holdout(held, public, iterations=iterations):
            ratios.append((kind_of(s.workload, s.method), s.measured / s.predicted - 1.0))
    groups: dict[str, list[float]] = {"all": [v for _, v in ratios]}
    for key, value in ratios:
        groups.setdefault(key, []).append(value)
        if key != "pretrain":
            groups.setdefault("finetune", []).append(value)
    return {
        "coverage": COVERAGE,
        "validation": VALIDATION,
        "data": [csv_path.name] + ([holdout_path.name] if holdout_path is not None else []),
        "excluded_families": dict(EXCLUDED_FAMILIES),
        "borrowed_family_widening": borrowed_family_widening(),
        "bands": {key: _band(values) for key, values in sorted(groups.items())},
    }


def main() -> None:
    BAND_PATH.write_text(json.dumps(band_table(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(BAND_PATH)


if __name__ == "__main__":
    main()
