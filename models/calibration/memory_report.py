"""Markdown tables of the memory model's accuracy, in-sample beside out-of-sample, for
``models/memory_calibration.md``:

    python -m gpuprice.models.calibration.memory_report

Groups: method, framework, sequence-length band and source; columns: in-sample (shipped
constants), leave-one-source-out, leave-one-source-family-out and, for each unseen holdout
(:data:`HOLDOUTS`), the shipped constants (never fitted to it). Last, every completed run whose
card the catalog knows that the product judges ``does_not_fit`` at margin 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpuprice.models.calibration.memory_fit import (
    Measured,
    leave_one_family_out,
    leave_one_source_out,
    prepared,
    select_rows,
    stats,
)
from gpuprice.models.memory import MemoryEstimate, TrainingSetup, estimate_memory

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
# Unseen sources, in the order they were added; never used to calibrate anything.
HOLDOUTS = {
    "ms-swift": DATA / "measured_memory_holdout.csv",
    "universal-llm-trainer": DATA / "measured_memory_holdout2.csv",
    "Liger-Kernel HF example": DATA / "measured_memory_holdout3.csv",
    "fms-acceleration benchmarks": DATA / "measured_memory_holdout4.csv",
    "gpjt fine-tune-2024-04": DATA / "measured_memory_holdout5.csv",
    "ColossalChat SFT benchmark": DATA / "measured_memory_holdout6.csv",
    "axolotl example configs": DATA / "measured_memory_holdout7.csv",
    "LLMs-from-scratch training-speed tips": DATA / "measured_memory_holdout8.csv",
    "Lambda distributed-training-guide": DATA / "measured_memory_holdout9.csv",
}


def seq_band(m: Measured) -> str:
    s = m.setup.seq_len
    return "<= 1024" if s <= 1024 else "1025-4095" if s < 4096 else ">= 4096"


def _cell(predicted: np.ndarray, measured: np.ndarray) -> str:
    median, within = stats(predicted, measured)
    signed = float(np.median(predicted / measured - 1) * 100)
    return f"{median:.1f} % / {within:.0f} % ({signed:+.0f} %)"


def grouped(
    rows: Sequence[Measured], columns: dict[str, np.ndarray], key: Callable[[Measured], str]
) -> list[str]:
    measured = np.array([m.gb for m in rows])
    groups: dict[str, list[int]] = {}
    for i, m in enumerate(rows):
        groups.setdefault(key(m), []).append(i)
    header = "| group | runs | " + " | ".join(columns) + " |"
    lines = [header, "|" + "---|" * (len(columns) + 2)]
    for name, index in sorted(groups.items()):
        cells = [_cell(values[index], measured[index]) for values in columns.values()]
        lines.append(f"| {name} | {len(index)} | " + " | ".join(cells) + " |")
    cells = [_cell(values, measured) for values in columns.values()]
    lines.append(f"| **all** | {len(rows)} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    selection = select_rows(DATA / "measured_memory_public.csv")
    rows = selection.measured
    columns = {
        "in-sample": prepared(rows).per_gpu_gb(),
        "leave-one-source-out": leave_one_source_out(rows).predicted,
        "leave-one-family-out": leave_one_family_out(rows).predicted,
    }
    print("Cells: median |error| / share within 20 % (median signed error).\n")
    for title, key in (
        ("method", lambda m: m.setup.method),
        ("framework", lambda m: m.setup.framework),
        ("sequence length", seq_band),
        ("source", lambda m: m.source),
    ):
        print(f"#### By {title}\n")
        print("\n".join(grouped(rows, columns, key)) + "\n")
    for name, path in HOLDOUTS.items():
        unseen = select_rows(path).measured
        shipped = {"shipped constants (never fitted to it)": prepared(unseen).per_gpu_gb()}
        for title, key in (
            ("method", lambda m: m.setup.method),
            ("sequence length", seq_band),
            ("attention", lambda m: m.setup.attention),
        ):
            print(f"#### Unseen holdout ({name}) by {title}\n")
            print("\n".join(grouped(unseen, shipped, key)) + "\n")
    # The target is over every unseen source at once: one table, a row per source.
    together = [(name, m) for name, path in HOLDOUTS.items() for m in select_rows(path).measured]
    unseen_all = [m for _, m in together]
    source_of = {id(m): name for name, m in together}
    shipped_all = {"shipped constants (never fitted to any)": prepared(unseen_all).per_gpu_gb()}
    print("#### Unseen holdouts together, by source\n")
    print("\n".join(grouped(unseen_all, shipped_all, lambda m: source_of[id(m)])) + "\n")
    print("#### Completed runs judged does_not_fit at margin 0\n")
    print("\n".join(completed_but_not_fitting()) + "\n")


@dataclass(frozen=True)
class Verdicts:
    """Issue 33's verdict targets at margin 0 over a set of measured-run files: the out-of-memory
    runs (every one should be judged ``does_not_fit``) and the completed runs on a card the
    catalog names (none should be)."""

    oom_runs: int
    oom_judged_not_fitting: int
    completed_on_a_card: int
    completed_judged_not_fitting: list[tuple[Measured, MemoryEstimate, float]]


def _does_not_fit(setup: TrainingSetup, card_gb: float) -> tuple[bool, MemoryEstimate]:
    estimate = estimate_memory(setup.model_copy(update={"margin": 0.0}), card_gb=card_gb)
    return estimate.verdict(card_gb).verdict == "does_not_fit", estimate


def verdicts(paths: Sequence[Path]) -> Verdicts:
    """Judge every out-of-memory and every completed run of ``paths`` (the completed ones on the
    card their ``gpu`` column names; runs on no card or one the catalog lacks are skipped)."""
    from gpuprice.errors import BadInput
    from gpuprice.models.catalog import resolve_gpu

    ooms = [(setup, card) for path in paths for _, _, setup, card in select_rows(path).oom]
    oom_not_fitting = sum(_does_not_fit(setup, card)[0] for setup, card in ooms)
    judged, over = 0, []
    for path in paths:
        for m in select_rows(path).measured:
            try:
                capacity = resolve_gpu(m.row["gpu"]).usable_memory_gb
            except BadInput:
                continue  # no card named, or one the catalog does not carry
            judged += 1
            fails, estimate = _does_not_fit(m.setup, capacity)
            if fails:
                over.append((m, estimate, capacity))
    return Verdicts(len(ooms), oom_not_fitting, judged, over)


def completed_but_not_fitting() -> list[str]:
    """Every measured (completed) run, public and unseen, whose card the catalog names, that the
    product judges ``does_not_fit`` at margin 0: one line each, and the count judged."""
    tally = verdicts((DATA / "measured_memory_public.csv", *HOLDOUTS.values()))
    lines = [
        f"* {m.source}: {m.setup.arch.name} {m.setup.method}, seq {m.setup.seq_len} x "
        f"{m.setup.micro_batch}, {m.row['gpu']}: device {estimate.device_gb:.1f} GB "
        f"predicted vs {capacity:.1f} GB (measured {m.gb:.1f} GB {m.setup.memory_metric}, "
        f"{estimate.per_gpu_gb / m.gb - 1:+.0%})"
        for m, estimate, capacity in tally.completed_judged_not_fitting
    ]
    return [
        f"{len(lines)} of {tally.completed_on_a_card} completed runs on a catalog card "
        f"(and {tally.oom_judged_not_fitting} of {tally.oom_runs} out-of-memory runs judged not to fit):",
        "",
        *lines,
    ]


if __name__ == "__main__":
    main()
