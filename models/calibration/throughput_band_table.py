"""Regenerate ``models/throughput_band.json``: the out-of-sample error band of tokens/s.

    python -m gpuprice.models.calibration.throughput_band_table

Each source of ``throughput_public.csv`` is predicted by parameters refitted without it (the
leave-one-source-out of ``mfu_calibration.md``); the band per workload kind (fine-tuning,
pre-training) is the 5th-95th percentile of measured / predicted - 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from gpuprice.models.calibration.throughput_fit import fit_parameters
from gpuprice.models.calibration.throughput_rows import (
    benchmark_case,
    cases_from_benchmarks,
    load_benchmark_rows,
    row_number,
    source_of,
)
from gpuprice.models.throughput import evaluate
from gpuprice.models.throughput_band import BAND_PATH
from gpuprice.models.throughput_parameters import PRIOR_PARAMETERS

COVERAGE = 0.9
DEFAULT_CSV = Path(__file__).resolve().parents[2] / "tests" / "data" / "throughput_public.csv"


def kind_of(row: dict[str, object]) -> str:
    return "finetune" if str(row["workload"]).startswith("finetune") else "pretrain"


def band_table(csv_path: Path = DEFAULT_CSV, iterations: int = 1500) -> dict[str, Any]:
    rows = load_benchmark_rows(str(csv_path))
    sources = [source_of(r) for r in rows]
    ratio = np.zeros(len(rows))
    for source in sorted(set(sources)):
        train = [r for r, s in zip(rows, sources, strict=True) if s != source]
        test = [i for i, s in enumerate(sources) if s == source]
        fitted = fit_parameters(train, PRIOR_PARAMETERS, iterations=iterations, restarts=2)
        batch = cases_from_benchmarks([benchmark_case(rows[i]) for i in test])
        predicted = evaluate(batch, fitted).tokens_per_sec_per_gpu
        measured = np.array([row_number(rows[i], "tokens_per_sec_per_gpu") for i in test], dtype=float)
        ratio[test] = measured / predicted - 1.0
    tail = (1.0 - COVERAGE) / 2.0
    groups: dict[str, list[int]] = {"all": list(range(len(rows)))}
    for i, row in enumerate(rows):
        groups.setdefault(kind_of(row), []).append(i)
    bands = {
        key: {
            "runs": len(index),
            "low": round(float(np.quantile(ratio[index], tail)), 4),
            "high": round(float(np.quantile(ratio[index], 1.0 - tail)), 4),
        }
        for key, index in sorted(groups.items())
    }
    return {
        "coverage": COVERAGE,
        "validation": "out-of-sample, leave-one-source-out",
        "data": csv_path.name,
        "bands": bands,
    }


def main() -> None:
    BAND_PATH.write_text(json.dumps(band_table(), indent=2) + "\n", encoding="utf-8")
    print(BAND_PATH)


if __name__ == "__main__":
    main()
