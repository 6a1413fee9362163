"""What every benchmark returns: a figure measured against a baseline in the same run.

Timings on a shared 2-core machine drift by tens of percent between runs, so each figure carries
its baseline (measured side by side, interleaved where possible) and the ratio of the two; the
absolute value is kept for reference. A target is one or more bounds on the value or the ratio.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator


class Bound(BaseModel):
    """One condition of a target, e.g. ``value <= 0.2`` or ``ratio >= 50``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    on: Literal["value", "ratio"]
    op: Literal["<=", ">="]
    limit: float

    def holds(self, value: float, ratio: float) -> bool:
        measured = value if self.on == "value" else ratio
        return measured <= self.limit if self.op == "<=" else measured >= self.limit

    def text(self, unit: str) -> str:
        suffix = f" {unit}" if self.on == "value" else "x"
        return f"{self.on} {self.op} {self.limit:g}{suffix}"


class Figure(BaseModel):
    """One benchmark figure. ``ratio`` is ``value / baseline_value`` (its meaning: ``ratio_meaning``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9_.]+$")
    value: float = Field(ge=0)
    unit: str
    baseline: str = Field(description="what the baseline is")
    baseline_value: float = Field(gt=0)
    ratio_meaning: str
    target: tuple[Bound, ...] = ()
    details: dict[str, Any] = Field(default_factory=dict, description="secondary numbers (MB/s, rows, ...)")

    @model_validator(mode="after")
    def _finite(self) -> Figure:
        if self.value != self.value or self.value == float("inf"):
            raise ValueError(f"{self.name}: value is not finite")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ratio(self) -> float:
        return self.value / self.baseline_value

    @computed_field  # type: ignore[prop-decorator]
    @property
    def target_text(self) -> str:
        return " and ".join(b.text(self.unit) for b in self.target) or "none (reference only)"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool | None:
        """None when the figure has no target (it is there for reference)."""
        if not self.target:
            return None
        return all(b.holds(self.value, self.ratio) for b in self.target)

    def line(self) -> str:
        """The one line ``make bench`` prints for this figure."""
        verdict = {True: "PASS", False: "FAIL", None: "info"}[self.passed]
        return (
            f"{verdict:4}  {self.name:<38} {_num(self.value):>10} {self.unit:<10} "
            f"baseline {_num(self.baseline_value):>10} ({self.baseline})  "
            f"ratio {self.ratio:.3g}x [{self.ratio_meaning}]  target: {self.target_text}"
        )


def rate_figure(
    name: str, count: float, unit: str, *, seconds: float, baseline: str, baseline_seconds: float, **rest: Any
) -> Figure:
    """A throughput figure: the same ``count`` of items per ``seconds`` of the product and per
    ``baseline_seconds`` of the baseline (``rest``: ratio_meaning, target, details)."""
    return Figure(
        name=name,
        value=count / seconds,
        unit=unit,
        baseline=baseline,
        baseline_value=count / baseline_seconds,
        **rest,
    )


def _num(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``repeats`` calls (median: robust to the odd stall of a shared machine)."""
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_medians(candidates: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median seconds of each candidate, run in alternation so machine noise hits all alike."""
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(repeats):
        for name, fn in candidates.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}
