"""The reliability figures, counted by the tests themselves and written to tests/artifacts.

Each test module keeps a :class:`Tally` and writes its own section of reliability.json when it
finishes, so running one file updates its figures without wiping the others'.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ARTIFACT = Path(__file__).resolve().parents[1] / "artifacts" / "reliability.json"


@dataclass
class Tally:
    section: str
    faults: Counter = field(default_factory=Counter)  # fault kind -> times injected
    runs: int = 0
    runs_survived: int = 0
    rows_lost: int = 0
    rows_checked: int = 0
    inputs_tried: int = 0
    inputs_clean: int = 0
    by_command: Counter = field(default_factory=Counter)
    notes: dict[str, object] = field(default_factory=dict)

    def fault(self, kind: str, n: int = 1) -> None:
        self.faults[kind] += n

    def run(self, survived: bool) -> None:
        self.runs += 1
        self.runs_survived += int(survived)

    def rows(self, expected: int, found: int) -> None:
        self.rows_checked += expected
        self.rows_lost += max(0, expected - found)

    def as_dict(self) -> dict:
        data: dict[str, object] = {"updated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
        if self.faults:
            data["faults_injected"] = dict(sorted(self.faults.items()))
            data["faults_total"] = sum(self.faults.values())
        if self.runs:
            data.update(runs=self.runs, runs_survived=self.runs_survived)
        if self.rows_checked:
            data.update(rows_checked=self.rows_checked, rows_lost=self.rows_lost)
        if self.inputs_tried:
            data.update(
                bad_inputs_tried=self.inputs_tried,
                clean_one_line_errors=self.inputs_clean,
                clean_share=round(self.inputs_clean / self.inputs_tried, 4),
                by_command=dict(sorted(self.by_command.items())),
            )
        data.update(self.notes)
        return data

    def write(self, path: Path = ARTIFACT) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            report = {}
        report[self.section] = self.as_dict()
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".reliability.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2, sort_keys=True, default=str)
            handle.write("\n")
        os.replace(tmp, path)
