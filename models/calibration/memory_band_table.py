"""Regenerate ``models/memory_band.json`` from the leave-one-source-family-out validation.

    python -m gpuprice.models.calibration.memory_band_table [measured_memory_public.csv]

The band per method is the 5th-95th percentile of measured / predicted - 1 over that method's
measured runs, each predicted by constants calibrated without its source family. The same runs
predicted from their parameter count alone (the representative shape ``--params-b`` gets, in place
of the model's real one) give the bands keyed "<method>, shape from size": what a prediction
without the model's shape is worth.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Sequence
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
from gpuprice.models.memory_band import BAND_PATH, SHAPE_FROM_SIZE

COVERAGE = 0.9
DEFAULT_CSV = Path(__file__).resolve().parents[2] / "tests" / "data" / "measured_memory_public.csv"


def band_table(csv_path: Path) -> dict[str, Any]:
    selection = select_rows(csv_path)
    held = leave_one_family_out(selection.measured)
    measured = np.array([m.gb for m in held.measured])
    methods = [m.setup.method for m in held.measured]
    bands = _bands(held.predicted, measured, methods, "")
    # the runs whose model has a real shape, predicted from their size with their family's constants
    known = [i for i, m in enumerate(held.measured) if not m.setup.arch.representative]
    from_size = np.zeros(len(known))
    for family in {family_of(held.measured[i].source) for i in known}:
        rows = [j for j, i in enumerate(known) if family_of(held.measured[i].source) == family]
        sized = [_sized(held.measured[known[j]]) for j in rows]
        from_size[rows] = prepared(sized).per_gpu_gb(held.constants[family])
    bands |= _bands(from_size, measured[known], [methods[i] for i in known], SHAPE_FROM_SIZE)
    return {
        "coverage": COVERAGE,
        "validation": "out-of-sample, leave-one-source-family-out",
        "data": csv_path.name,
        "bands": dict(sorted(bands.items())),
    }


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
    return dataclasses.replace(m, setup=m.setup.model_copy(update={"arch": arch}))


def main(argv: list[str]) -> None:
    csv_path = Path(argv[0]) if argv else DEFAULT_CSV
    BAND_PATH.write_text(json.dumps(band_table(csv_path), indent=2) + "\n", encoding="utf-8")
    print(BAND_PATH)


if __name__ == "__main__":
    main(sys.argv[1:])
