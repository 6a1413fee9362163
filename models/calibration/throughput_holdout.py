"""Score the throughput model on measured runs from sources it was never fitted to.

    python -m gpuprice.models.calibration.throughput_holdout

``tests/data/throughput_holdout.csv`` holds public measurements (each row cites repository, file,
commit and table row) from trainers whose tables are not in ``throughput_public.csv``. A source
family is the repository (``owner/name``): a framework's tables leave together. When a family
also has rows in the calibration set (torchtitan has one), the constants are refitted from the
priors without that family before it is scored, so every holdout figure is out of sample.
Calibration tooling only: the product predicts with :mod:`gpuprice.models.throughput`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpuprice.models.calibration.throughput_fit import fit_parameters
from gpuprice.models.calibration.throughput_rows import (
    benchmark_case,
    cases_from_benchmarks,
    load_benchmark_rows,
    row_number,
    source_family,
)
from gpuprice.models.throughput import evaluate
from gpuprice.models.throughput_parameters import CALIBRATED_PARAMETERS, PRIOR_PARAMETERS

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
HOLDOUT_CSV = DATA / "throughput_holdout.csv"
PUBLIC_CSV = DATA / "throughput_public.csv"
WITHIN = 0.25  # the share of runs within +-25 % is reported beside the median


def family_of(row: Mapping[str, object]) -> str:
    """A row's source family: the repository (``owner/name``) or paper its source names first."""
    return source_family(row)


@dataclass(frozen=True)
class Scored:
    """One holdout row with its out-of-sample prediction."""

    family: str
    workload: str  # finetune_full, finetune_lora, finetune_qlora, pretrain_full
    method: str
    measured: float
    predicted: float
    refitted: bool  # the constants were refitted without this row's family

    @property
    def error(self) -> float:
        """predicted / measured - 1 (positive: the model is too fast)."""
        return self.predicted / self.measured - 1.0

    @property
    def finetune(self) -> bool:
        return self.workload.startswith("finetune")


def score_holdout(
    holdout: Sequence[Mapping[str, object]] | None = None,
    public: Sequence[Mapping[str, object]] | None = None,
    *,
    iterations: int = 1500,
) -> list[Scored]:
    """Every holdout row predicted by constants that never saw its source family."""
    holdout = load_benchmark_rows(str(HOLDOUT_CSV)) if holdout is None else holdout
    public = load_benchmark_rows(str(PUBLIC_CSV)) if public is None else public
    public_families = {family_of(r) for r in public}
    scored: list[Scored] = []
    for family in sorted({family_of(r) for r in holdout}):
        rows = [r for r in holdout if family_of(r) == family]
        refit = family in public_families
        params = (
            fit_parameters(
                [r for r in public if family_of(r) != family], PRIOR_PARAMETERS, iterations=iterations
            )
            if refit
            else CALIBRATED_PARAMETERS
        )
        cases = [benchmark_case(r) for r in rows]
        predicted = evaluate(cases_from_benchmarks(cases), params).tokens_per_sec_per_gpu
        for row, case, value in zip(rows, cases, predicted, strict=True):
            measured = row_number(row, "tokens_per_sec_per_gpu")
            assert measured is not None  # load_benchmark_rows keeps only rows with a figure
            scored.append(Scored(family, str(row["workload"]), case.method, measured, float(value), refit))
    return scored


@dataclass(frozen=True)
class Summary:
    runs: int
    median_abs: float  # median |predicted / measured - 1|
    within: float  # share of runs within +-WITHIN
    median_signed: float  # median predicted / measured - 1 (positive: too fast)


def summarize(scored: Sequence[Scored]) -> Summary:
    errors = np.array([s.error for s in scored])
    return Summary(
        runs=len(errors),
        median_abs=float(np.median(np.abs(errors))),
        within=float(np.mean(np.abs(errors) <= WITHIN)),
        median_signed=float(np.median(errors)),
    )


def groups(scored: Sequence[Scored]) -> dict[str, Summary]:
    """Summaries for all rows, fine-tuning / pre-training, each family and each method."""
    keyed: dict[str, list[Scored]] = {"all": list(scored)}
    for s in scored:
        keyed.setdefault("fine-tuning" if s.finetune else "pre-training", []).append(s)
        keyed.setdefault(f"family {s.family}", []).append(s)
        keyed.setdefault(f"{s.workload}", []).append(s)
    return {key: summarize(rows) for key, rows in keyed.items()}


def table(scored: Sequence[Scored]) -> str:
    """The markdown table of ``models/mfu_calibration.md`` (holdout section)."""
    lines = [
        "| group | runs | median abs error | within 25 % | median signed |",
        "|---|---|---|---|---|",
    ]
    for key, s in groups(scored).items():
        lines.append(
            f"| {key} | {s.runs} | {100 * s.median_abs:.1f} % | {100 * s.within:.0f} % | {100 * s.median_signed:+.1f} % |"
        )
    return "\n".join(lines)


def main() -> None:
    print(table(score_holdout()))


if __name__ == "__main__":
    main()
