"""The error band on every memory prediction, from the out-of-sample validation.

``models/memory_band.json`` holds, per method (and for all runs), the 5th and 95th percentiles of
``measured / predicted - 1`` over the measured runs, each predicted by constants that never saw its
source family: the calibration runs with their family left out of the calibration
(``models/calibration/memory_fit.py``, ``leave_one_family_out``), the unseen sources' runs with the
shipped constants (regenerate with ``python -m gpuprice.models.calibration.memory_band_table``).
A prediction of ``p`` GB gets the band ``[p (1 + low), p (1 + high)]``: "90 % of runs like this
were within low/high of the prediction". A method with fewer than ``MIN_RUNS`` validated runs uses
the band of all runs. A model known only by its size (``--params-b``: the representative shape
stands in for its real one) gets the bands keyed "<method>, shape from size": the same runs
predicted from their parameter count alone.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuprice.models.memory_setup import TrainingSetup

BAND_PATH = Path(__file__).with_name("memory_band.json")
MIN_RUNS = 10
SHAPE_FROM_SIZE = ", shape from size"


@dataclass(frozen=True)
class Band:
    key: str  # which runs it rests on: a method, or "all"
    runs: int
    low: float  # relative: measured / predicted - 1 at the lower percentile
    high: float
    coverage: float  # share of runs inside [low, high]
    validation: str

    def apply(self, predicted_gb: float) -> tuple[float, float]:
        return predicted_gb * (1.0 + self.low), predicted_gb * (1.0 + self.high)

    def text(self, predicted_gb: float) -> str:
        return (
            f"{predicted_gb:.1f} GB, {self.coverage:.0%} of runs like this ({self.key}, {self.runs} measured "
            f"runs, {self.validation}) within {self.low:+.0%}/{self.high:+.0%}"
        )

    def contract_dict(self) -> dict[str, Any]:
        return {
            "runs_like": self.key,
            "runs": self.runs,
            "low_pct": round(100 * self.low, 1),
            "high_pct": round(100 * self.high, 1),
            "coverage": self.coverage,
            "validation": self.validation,
        }


@functools.cache
def _table() -> dict[str, Band]:
    data = json.loads(BAND_PATH.read_text(encoding="utf-8"))
    coverage, validation = float(data["coverage"]), str(data["validation"])
    return {
        key: Band(key, int(v["runs"]), float(v["low"]), float(v["high"]), coverage, validation)
        for key, v in data["bands"].items()
    }


def band_of(method: str, shape_known: bool = True) -> Band:
    table = _table()
    suffix = "" if shape_known else SHAPE_FROM_SIZE
    band = table.get(method + suffix)
    return band if band is not None and band.runs >= MIN_RUNS else table["all" + suffix]


def band_for(setup: TrainingSetup) -> Band:
    """The band of runs like this setup (its method; predicted from size alone when its shape is)."""
    return band_of(setup.method, shape_known=not setup.arch.representative)
