"""Regenerate ``models/memory_band.json`` from the out-of-sample validation.

    python -m gpuprice.models.calibration.memory_band_table [measured_memory_public.csv]

Every run is predicted by constants that never saw its source family: each family of the
calibration set by constants calibrated without it (leave-one-source-family-out), and the runs of
the unseen sources (``memory_report.HOLDOUTS``) by the shipped constants, which were never fitted to
them; as the throughput band (``throughput_band_table``) does. The band per method is the 5th-95th
percentile of measured / predicted - 1 over that method's runs. The same runs predicted from their
parameter count alone (the representative shape ``--params-b`` gets, in place of the model's real
one) give the bands keyed "<method>, shape from size": what a prediction without the model's shape
is worth.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from gpuprice.models.architectures import shape_for_params
from gpuprice.models.calibration.memory_fit import (
    Measured,
    family_of,
    leave_one_family_out,
    prepared,
    relative_band,
    select_rows,
)
from gpuprice.models.calibration.memory_report import HOLDOUTS
from gpuprice.models.memory_band import BAND_PATH, SHAPE_FROM_SIZE

COVERAGE = 0.9
DEFAULT_CSV = Path(__file__).resolve().parents[2] / "tests" / "data" / "measured_memory_public.csv"
VALIDATION = "out-of-sample: leave-one-source-family-out and unseen sources"


@dataclass
class _Scored:
    """Runs with their out-of-sample predictions: as given, and from their parameter count alone."""

    runs: list[Measured] = field(default_factory=list)
    predicted: list[float] = field(default_factory=list)
    sized_runs: list[Measured] = field(default_factory=list)
    sized_predicted: list[float] = field(default_factory=list)


def band_table(csv_path: Path, unseen: Sequence[Path] = tuple(HOLDOUTS.values())) -> dict[str, Any]:
    scored = _Scored()
    _add_calibration_runs(scored, csv_path)
    for path in unseen:
        _add_unseen_runs(scored, path)
    bands = _bands(np.array(scored.predicted), _gb(scored.runs), _methods(scored.runs), "")
    bands |= _bands(
        np.array(scored.sized_predicted), _gb(scored.sized_runs), _methods(scored.sized_runs), SHAPE_FROM_SIZE
    )
    return {
        "coverage": COVERAGE,
        "validation": VALIDATION,
        "data": [csv_path.name, *(path.name for path in unseen)],
        "bands": dict(sorted(bands.items())),
    }


def _add_calibration_runs(scored: _Scored, csv_path: Path) -> None:
    """Each run predicted by constants calibrated without its source family; the runs whose model
    has a real shape also from their size, with their family's constants."""
    held = leave_one_family_out(select_rows(csv_path).measured)
    scored.runs += held.measured
    scored.predicted += [float(v) for v in held.predicted]
    known = [m for m in held.measured if not m.setup.arch.representative]
    from_size = np.zeros(len(known))
    for family in {family_of(m.source) for m in known}:
        rows = [j for j, m in enumerate(known) if family_of(m.source) == family]
        from_size[rows] = prepared([_sized(known[j]) for j in rows]).per_gpu_gb(held.constants[family])
    scored.sized_runs += known
    scored.sized_predicted += [float(v) for v in from_size]


def _add_unseen_runs(scored: _Scored, path: Path) -> None:
    """An unseen source's runs with the shipped constants (never fitted to them), as given and from
    their size; a run whose model is known only by its size (a stand-in) is predicted from size
    already."""
    runs = select_rows(path).measured
    shipped = [float(v) for v in prepared(runs).per_gpu_gb()]
    real_shape = [m for m in runs if not m.setup.arch.representative]
    resized = iter(prepared([_sized(m) for m in real_shape]).per_gpu_gb() if real_shape else [])
    scored.runs += runs
    scored.predicted += shipped
    scored.sized_runs += runs
    scored.sized_predicted += [
        value if m.setup.arch.representative else float(next(resized))
        for m, value in zip(runs, shipped, strict=True)
    ]


def _gb(runs: Sequence[Measured]) -> np.ndarray:
    return np.array([m.gb for m in runs])


def _methods(runs: Sequence[Measured]) -> list[str]:
    return [m.setup.method for m in runs]


def _bands(
    predicted: np.ndarray, measured: np.ndarray, methods: Sequence[str], suffix: str
) -> dict[str, Any]:
    """The band of all runs and of each method's, keyed "<method><suffix>"."""
    groups: dict[str, list[int]] = {"all": list(range(len(measured)))}
    for i, method in enumerate(methods):
        groups.setdefault(method, []).append(i)
    bands = {}
    for key, index in groups.items():
        low, high = relative_band(predicted[index], measured[index], COVERAGE)
        bands[f"{key}{suffix}"] = {"runs": len(index), "low": round(low, 4), "high": round(high, 4)}
    return bands


def _sized(m: Measured) -> Measured:
    """The run with its model's shape replaced by the representative one of the same size."""
    arch = shape_for_params(m.setup.arch.n_params / 1e9)
    return replace(m, setup=m.setup.model_copy(update={"arch": arch}))


def main(argv: list[str]) -> None:
    csv_path = Path(argv[0]) if argv else DEFAULT_CSV
    BAND_PATH.write_text(json.dumps(band_table(csv_path), indent=2) + "\n", encoding="utf-8")
    print(BAND_PATH)


if __name__ == "__main__":
    main(sys.argv[1:])
