"""Markdown tables of the memory model's accuracy, in-sample beside out-of-sample, for
``models/memory_calibration.md``:

    python -m gpuprice.models.calibration.memory_report

Groups: method, framework, sequence-length band and source; columns: in-sample (shipped
constants), leave-one-source-out, leave-one-source-family-out and, for the unseen holdout
(``tests/data/measured_memory_holdout.csv``), the shipped constants (never fitted to it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from gpuprice.models.calibration.memory_fit import (
    Measured,
    leave_one_family_out,
    leave_one_source_out,
    select_rows,
    stats,
)
from gpuprice.models.memory import PreparedSetups

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"


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
        "in-sample": PreparedSetups([m.setup for m in rows]).per_gpu_gb(),
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
    unseen = select_rows(DATA / "measured_memory_holdout.csv").measured
    shipped = {
        "shipped constants (never fitted to it)": PreparedSetups([m.setup for m in unseen]).per_gpu_gb()
    }
    for title, key in (
        ("method", lambda m: m.setup.method),
        ("sequence length", seq_band),
        ("attention", lambda m: m.setup.attention),
    ):
        print(f"#### Unseen holdout (ms-swift) by {title}\n")
        print("\n".join(grouped(unseen, shipped, key)) + "\n")


if __name__ == "__main__":
    main()
