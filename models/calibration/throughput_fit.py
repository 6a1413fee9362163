"""Calibration of the throughput model's constants on benchmark rows, and its accuracy statistics.

Calibration tooling only (``models/mfu_calibration.md``): a derivative-free fit of
:class:`~gpuprice.models.throughput_parameters.ThroughputParameters` in log space, the per-row
error, and leave-one-source-out. Rows are read by :mod:`gpuprice.models.calibration.throughput_rows`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence

import numpy as np

from gpuprice.models.calibration.throughput_rows import (
    BenchmarkCase,
    benchmark_case,
    cases_from_benchmarks,
    row_number,
    source_family,
)
from gpuprice.models.throughput import evaluate
from gpuprice.models.throughput_parameters import (
    CALIBRATED_PARAMETERS,
    PRIOR_PARAMETERS,
    ThroughputParameters,
)


def _nelder_mead(
    f: Callable[[np.ndarray], float], x0: np.ndarray, *, iterations: int, step: float
) -> np.ndarray:
    """Minimise f from x0 (derivative-free: the objective has kinks from max() and medians)."""
    n = len(x0)
    simplex = np.vstack([x0] + [x0 + step * np.eye(n)[i] for i in range(n)])
    values = np.array([f(x) for x in simplex])
    for _ in range(iterations):
        order = np.argsort(values)
        simplex, values = simplex[order], values[order]
        centroid = simplex[:-1].mean(axis=0)
        reflected = centroid + (centroid - simplex[-1])
        f_reflected = f(reflected)
        if f_reflected < values[0]:
            expanded = centroid + 2.0 * (centroid - simplex[-1])
            f_expanded = f(expanded)
            simplex[-1], values[-1] = (
                (expanded, f_expanded) if f_expanded < f_reflected else (reflected, f_reflected)
            )
        elif f_reflected < values[-2]:
            simplex[-1], values[-1] = reflected, f_reflected
        else:
            contracted = centroid + 0.5 * (simplex[-1] - centroid)
            f_contracted = f(contracted)
            if f_contracted < values[-1]:
                simplex[-1], values[-1] = contracted, f_contracted
            else:
                simplex = simplex[0] + 0.5 * (simplex - simplex[0])
                values = np.array([f(x) for x in simplex])
    return simplex[int(np.argmin(values))]


# Robust loss: a row off by more than 50 % counts as 50 % (known misses cannot drag the fit).
LOSS_CAP = math.log(1.5)
MIN_ROWS_PER_PARAMETER = 3

_GLOBAL_FIELDS = (
    "half_width",
    "attention_efficiency",
    "hopper_attention_factor",
    "layer_overhead_ms",
    "dequant_bytes_per_param",
    "fp8_speedup",
    "lora_efficiency",
    "compile_speedup",
    "node_scaling_loss",
    "comm_overlap",
)


def _exercised_fields(cases: Sequence[BenchmarkCase]) -> set[str]:
    """Global parameters at least MIN_ROWS_PER_PARAMETER rows depend on; the others keep their
    start value (a parameter no row constrains would drift freely in the fit)."""
    fields = {"half_width", "attention_efficiency", "layer_overhead_ms"}
    checks = {
        "hopper_attention_factor": lambda c: c.profile.family in ("hopper", "blackwell"),
        "dequant_bytes_per_param": lambda c: c.method == "qlora",
        "fp8_speedup": lambda c: c.precision == "fp8" and c.profile.has_fp8,
        "lora_efficiency": lambda c: c.method != "full",
        "compile_speedup": lambda c: c.compiled,
        "node_scaling_loss": lambda c: c.gpus > 8,
        "comm_overlap": lambda c: c.gpus > 1,
    }
    # A parameter only one or two rows depend on would be tuned to those rows: it keeps its start.
    fields.update(
        name for name, uses in checks.items() if sum(bool(uses(c)) for c in cases) >= MIN_ROWS_PER_PARAMETER
    )
    return fields


def fit_parameters(
    rows: Sequence[Mapping[str, object]],
    start: ThroughputParameters = PRIOR_PARAMETERS,
    *,
    fixed: Collection[str] = (),
    iterations: int = 3000,
    restarts: int = 2,
) -> ThroughputParameters:
    """Calibrate the model's constants on benchmark rows (minimises mean |log(pred/measured)|).

    Families absent from ``rows`` and the global parameters named in ``fixed`` keep ``start``'s
    values. Everything is fitted in log space (all are positive); ``comm_overlap`` is capped at 1.
    """
    cases = [benchmark_case(r) for r in rows]
    measured = np.array([row_number(r, "tokens_per_sec_per_gpu") for r in rows], dtype=float)
    batch = cases_from_benchmarks(cases)
    families = [f for f in start.family_efficiency if f in {c.profile.family for c in cases}]
    exercised = _exercised_fields(cases)
    free = [name for name in _GLOBAL_FIELDS if name not in fixed and name in exercised]

    def unpack(x: np.ndarray) -> ThroughputParameters:
        values = np.exp(x)
        table = dict(start.family_efficiency)
        table.update({f: float(v) for f, v in zip(families, values[: len(families)], strict=True)})
        update = dict(zip(free, (float(v) for v in values[len(families) :]), strict=True))
        # shares and slow-downs that cannot exceed 1: the overlap is a share of the compute time;
        # Hopper's factor says how much of its dense peak FlashAttention-2 misses (it does not use
        # the new MMA units), so it cannot make attention faster than on the previous family
        for name in ("comm_overlap", "hopper_attention_factor"):
            if name in update:
                update[name] = min(update[name], 1.0)
        return start.model_copy(update={"family_efficiency": table, **update})

    def loss(x: np.ndarray) -> float:
        predicted = evaluate(batch, unpack(x)).tokens_per_sec_per_gpu
        return float(np.mean(np.minimum(np.abs(np.log(predicted / measured)), LOSS_CAP)))

    floor = 1e-4  # a parameter may fit to ~0 (e.g. the node loss); keep it finite in log space
    x = np.log([start.family_efficiency[f] for f in families] + [max(getattr(start, n), floor) for n in free])
    for _ in range(restarts):
        x = _nelder_mead(loss, x, iterations=iterations, step=0.15)
    return unpack(x)


def absolute_percentage_errors(
    rows: Sequence[Mapping[str, object]], params: ThroughputParameters = CALIBRATED_PARAMETERS
) -> np.ndarray:
    """|predicted / measured - 1| for each row (the accuracy statistic of mfu_calibration.md)."""
    batch = cases_from_benchmarks([benchmark_case(r) for r in rows])
    measured = np.array([row_number(r, "tokens_per_sec_per_gpu") for r in rows], dtype=float)
    return np.abs(evaluate(batch, params).tokens_per_sec_per_gpu / measured - 1.0)


def leave_one_source_out(
    rows: Sequence[Mapping[str, object]], *, iterations: int = 1500, restarts: int = 2
) -> np.ndarray:
    """|predicted / measured - 1| of each row, predicted by parameters refitted (from the priors)
    on every other source family's rows (a repository's or paper's tables leave together)."""
    errors = np.zeros(len(rows))
    sources = [source_family(r) for r in rows]
    for source in sorted(set(sources)):
        train = [r for r, s in zip(rows, sources, strict=True) if s != source]
        test = [i for i, s in enumerate(sources) if s == source]
        fitted = fit_parameters(train, PRIOR_PARAMETERS, iterations=iterations, restarts=restarts)
        errors[test] = absolute_percentage_errors([rows[i] for i in test], fitted)
    return errors
