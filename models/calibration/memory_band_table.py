"""Regenerate ``models/memory_band.json`` from the leave-one-source-family-out validation.

    python -m gpuprice.models.calibration.memory_band_table [measured_memory_public.csv]

The band per method is the 5th-95th percentile of measured / predicted - 1 over that method's
measured runs, each predicted by constants calibrated without its source family.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from gpuprice.models.calibration.memory_fit import leave_one_family_out, relative_band, select_rows
from gpuprice.models.memory_band import BAND_PATH

COVERAGE = 0.9
DEFAULT_CSV = Path(__file__).resolve().parents[2] / "tests" / "data" / "measured_memory_public.csv"


def band_table(csv_path: Path) -> dict[str, Any]:
    selection = select_rows(csv_path)
    held = leave_one_family_out(selection.measured)
    measured = np.array([m.gb for m in held.measured])
    groups: dict[str, list[int]] = {"all": list(range(len(measured)))}
    for i, m in enumerate(held.measured):
        groups.setdefault(m.setup.method, []).append(i)
    bands = {}
    for key, index in groups.items():
        low, high = relative_band(held.predicted[index], measured[index], COVERAGE)
        bands[key] = {"runs": len(index), "low": round(low, 4), "high": round(high, 4)}
    return {
        "coverage": COVERAGE,
        "validation": "out-of-sample, leave-one-source-family-out",
        "data": csv_path.name,
        "bands": dict(sorted(bands.items())),
    }


def main(argv: list[str]) -> None:
    csv_path = Path(argv[0]) if argv else DEFAULT_CSV
    BAND_PATH.write_text(json.dumps(band_table(csv_path), indent=2) + "\n", encoding="utf-8")
    print(BAND_PATH)


if __name__ == "__main__":
    main(sys.argv[1:])
