"""Calibration and validation of the memory model on measured peaks (``measured_memory_public.csv``).

Row selection (documented in ``models/memory_calibration.md``):

* ``data_kind`` must be ``measured``; ``memory_metric`` readings marked *approx* are left out.
* Capacity-boundary rows ("max context that fits") are not peaks: checked separately.
* Notes naming what the model cannot know are left out: unpacked datasets (real sequences shorter
  than ``seq_len``) and anomaly reports. Optimisations (torch.compile, chunked cross-entropy,
  activation offloading, optimizer-in-backward, cumulative ablation tables) are model inputs.
* Rows :func:`setup_from_measurement_row` cannot map (:class:`UnusableRow`) are left out.
* OOM rows must be predicted not to fit (device peak, margin excluded, above the card). OOM rows
  missing seq_len/micro_batch/precision use the least memory-hungry values (a lower bound).

:func:`calibrate` is a coordinate descent over a fixed grid of the five constants; it minimises
the mean of min(|ln(pred/measured)|, ln 1.5) so a few inconsistent rows cannot drag them.
:func:`leave_one_source_out` calibrates without each source and scores that source.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpuprice.models.calibration.memory_rows import (
    UnusableRow,
    setup_from_measurement_row,
    techniques_of,
)
from gpuprice.models.hf_config import config_path_in_table
from gpuprice.models.memory import GB, GIB, MemoryConstants, PreparedSetups, TrainingSetup

UNMODELLED = re.compile(r"unpacked|anomaly", re.IGNORECASE)
FAMILY_MAX_GB = {
    "a100": 80.0,
    "h100": 94.0,
    "h200": 141.0,
    "a10g": 24.0,
    "l40s": 48.0,
    "rtx 3090": 24.0,
    "rtx 4090": 24.0,
}
LOWER_BOUND_FILL = {"seq_len": "128", "micro_batch": "1", "precision": "bf16-true"}

# Coordinate-descent grid for the five constants (physically plausible ranges).
GRID: dict[str, np.ndarray] = {
    "cuda_context_gb": np.round(np.arange(0.0, 3.0001, 0.1), 4),
    "fragmentation": np.round(np.arange(0.0, 0.3001, 0.01), 4),
    "activation_factor": np.round(np.arange(0.5, 2.0001, 0.02), 4),
    "qlora_dequant_layers": np.round(np.arange(0.0, 12.0001, 0.25), 4),
    "comm_buffer_gb": np.round(np.arange(0.0, 4.0001, 0.1), 4),
}
# Start from the formula sheet's suggestions, not from the shipped values.
SHEET_START = MemoryConstants(
    cuda_context_gb=1.0,
    fragmentation=0.05,
    activation_factor=1.0,
    qlora_dequant_layers=1.0,
    comm_buffer_gb=0.5,
)
LOSS_CAP = math.log(1.5)  # robust loss: a row off by more than 50 % counts as 50 %


@dataclass(frozen=True)
class Measured:
    index: int
    row: dict[str, str]
    setup: TrainingSetup
    gb: float
    card_gb: float | None = None  # the card it ran on (usable 1e9 bytes), as the product counts it

    @property
    def source(self) -> str:
        return source_of(self.row)


@dataclass(frozen=True)
class Selection:
    measured: list[Measured]
    oom: list[tuple[int, dict[str, str], TrainingSetup, float]]
    boundary: list[tuple[int, dict[str, str], TrainingSetup, float]]
    excluded: dict[int, str]


def source_of(row: dict[str, str]) -> str:
    """A row's source: the repository and file (or paper) before any commit or section marker."""
    text = row["source_url_or_repo_path"]
    text = re.split(r"\s@|\s\(|\s\"", text)[0]
    return " ".join(text.split()[:2])


def reported_gb(row: dict[str, str]) -> float:
    value = float(row["reported_value"])
    return value * GIB / GB if row["reported_unit"].strip().lower() == "gib" else value


# nvidia-smi memory.total of cards the catalog does not carry. AWS's A10G: 23028 MiB, the figure
# modal-labs/modal-client PR #2797 reports (Modal's GPU types are A10G, not A10; the catalog's a10
# row cites the same reading).
SMI_TOTAL_MIB = {"a10g": 23028}
CARD_IN_NOTES = r"(\d+(?:\.\d+)?)\s*GB\s+(?:card|GPU)\b"


def oom_capacity_gb(row: dict[str, str], rows: Sequence[dict[str, str]]) -> float:
    for family, mib in SMI_TOTAL_MIB.items():
        if family in row["gpu"].lower():
            return mib * 2**20 / GB
    # Usable bytes as the fit counts them: a sold "40 GB" card holds 40 GiB (catalog rule). The
    # notes name a card's size only as "<n> GB card/GPU": their other sizes are host RAM or the
    # memory a run used ("128GB CPU RAM", "21GB VRAM").
    for text, pattern in ((row["gpu"], r"(\d+(?:\.\d+)?)\s*GB"), (row["notes"], CARD_IN_NOTES)):
        found = re.search(pattern, text, re.IGNORECASE)
        if found:
            return float(found.group(1)) * GIB / GB
    sources = [r["gpu"] for r in rows if r["source_url_or_repo_path"] == row["source_url_or_repo_path"]]
    for text in (row["gpu"], *sources):
        for family, capacity in FAMILY_MAX_GB.items():
            if family in text.lower():
                return capacity * GIB / GB
    raise ValueError(f"row {row['model']}: no GPU capacity for an OOM row")


def card_of(row: dict[str, str], rows: Sequence[dict[str, str]]) -> float | None:
    """The usable 1e9 bytes of the card a row ran on: the catalog's figure (what ``fit --gpu``
    uses), else the size its gpu text or notes state; None when nothing names one."""
    from gpuprice.errors import BadInput
    from gpuprice.models.catalog import resolve_gpu

    try:
        return resolve_gpu(row["gpu"]).usable_memory_gb
    except BadInput:
        pass
    try:
        return oom_capacity_gb(row, rows)
    except ValueError:
        return None


def prepared(measured: Sequence[Measured]) -> PreparedSetups:
    """The rows' setups, each on its own card, ready for the vectorised kernel."""
    return PreparedSetups([m.setup for m in measured], [m.card_gb for m in measured])


def select_rows(path: Path) -> Selection:
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    measured: list[Measured] = []
    oom: list[tuple[int, dict[str, str], TrainingSetup, float]] = []
    boundary: list[tuple[int, dict[str, str], TrainingSetup, float]] = []
    excluded: dict[int, str] = {}
    previous: dict[str, frozenset[str]] = {}
    for i, row in enumerate(rows):
        metric = row["memory_metric"].lower()
        is_oom = row["peak_gb_per_gpu"].strip().upper() == "OOM"
        key = row["source_url_or_repo_path"]
        before = previous.get(key, frozenset())
        previous[key] = techniques_of(row["notes"], before)
        if row["data_kind"].strip().lower() != "measured":
            excluded[i] = f"data_kind {row['data_kind']}"
            continue
        if "approx" in metric:
            excluded[i] = "approximate reading"
            continue
        if UNMODELLED.search(row["notes"]):
            excluded[i] = "unpacked dataset or anomaly report: real inputs unknown"
            continue
        source = dict(row)
        if (row.get("config") or "").strip():  # the model's config.json, as fit --batch reads it
            source["config"] = str(config_path_in_table(path, row["config"]))
        if is_oom:
            try:
                setup_from_measurement_row(source, before)
            except UnusableRow:
                source.update(LOWER_BOUND_FILL)
        try:
            setup = setup_from_measurement_row(source, before)
        except UnusableRow as exc:
            excluded[i] = f"unusable: {exc}"
            continue
        if is_oom:
            oom.append((i, row, setup, oom_capacity_gb(row, rows)))
        elif "boundary" in metric or row["notes"].upper().startswith("BOUNDARY"):
            # a max-context probe trains at one length: no variable-length allocator gap
            boundary.append((i, row, setup.model_copy(update={"variable_lengths": False}), reported_gb(row)))
        else:
            measured.append(Measured(i, row, setup, reported_gb(row), card_of(row, rows)))
    return Selection(measured, oom, boundary, excluded)


def stats(predicted: np.ndarray, measured: np.ndarray) -> tuple[float, float]:
    """(median absolute % error, % of rows within +-20 %)."""
    err = np.abs((predicted - measured) / measured)
    return float(np.median(err) * 100), float(np.mean(err <= 0.20) * 100)


def calibrate(
    prepared: PreparedSetups, measured: np.ndarray, start: MemoryConstants = SHEET_START
) -> MemoryConstants:
    """Coordinate descent over GRID minimising the capped mean |log(pred/measured)|."""

    def loss(c: MemoryConstants) -> float:
        return float(np.mean(np.minimum(np.abs(np.log(prepared.per_gpu_gb(c) / measured)), LOSS_CAP)))

    current = start
    for _ in range(30):
        previous = current
        for name, grid in GRID.items():
            scores = [(loss(current.model_copy(update={name: float(v)})), float(v)) for v in grid]
            best = min(scores)[1]  # ties -> the smaller value
            current = current.model_copy(update={name: best})
        if current == previous:
            break
    return current


@dataclass(frozen=True)
class HeldOut:
    """Leave-one-source-out predictions: each row predicted by constants calibrated without its source."""

    measured: list[Measured]
    predicted: np.ndarray
    constants: dict[str, MemoryConstants]


def leave_one_source_out(measured: Sequence[Measured]) -> HeldOut:
    sources = sorted({m.source for m in measured})
    values = np.array([m.gb for m in measured])
    predicted = np.zeros(len(measured))
    constants: dict[str, MemoryConstants] = {}
    for source in sources:
        train = [i for i, m in enumerate(measured) if m.source != source]
        test = [i for i, m in enumerate(measured) if m.source == source]
        fitted = calibrate(prepared([measured[i] for i in train]), values[train])
        constants[source] = fitted
        predicted[test] = prepared([measured[i] for i in test]).per_gpu_gb(fitted)
    return HeldOut(list(measured), predicted, constants)


def family_of(source: str) -> str:
    """A source's family: the repository (or organisation) that published it. One framework's
    tables (litgpt's tutorial, resource table and config-hub README) leave the calibration
    together, so no table is scored by constants its sibling tables shaped."""
    return source.split()[0]


def leave_one_family_out(measured: Sequence[Measured]) -> HeldOut:
    """Calibrate without each source family, predict that family's rows (``constants`` by family)."""
    families = sorted({family_of(m.source) for m in measured})
    values = np.array([m.gb for m in measured])
    predicted = np.zeros(len(measured))
    constants: dict[str, MemoryConstants] = {}
    for family in families:
        train = [i for i, m in enumerate(measured) if family_of(m.source) != family]
        test = [i for i, m in enumerate(measured) if family_of(m.source) == family]
        fitted = calibrate(prepared([measured[i] for i in train]), values[train])
        constants[family] = fitted
        predicted[test] = prepared([measured[i] for i in test]).per_gpu_gb(fitted)
    return HeldOut(list(measured), predicted, constants)


def relative_band(predicted: np.ndarray, measured: np.ndarray, coverage: float = 0.9) -> tuple[float, float]:
    """(low, high) percentiles of measured / predicted - 1 holding ``coverage`` of the runs."""
    ratio = measured / predicted - 1.0
    tail = (1.0 - coverage) / 2.0
    return float(np.quantile(ratio, tail)), float(np.quantile(ratio, 1.0 - tail))


def table(
    measured: Sequence[Measured], predicted: np.ndarray, key: str
) -> list[tuple[str, int, float, float]]:
    """(group, rows, median abs %, % within 20 %) by ``key`` = "method" or "source"."""
    values = np.array([m.gb for m in measured])
    groups: dict[str, list[int]] = {}
    for i, m in enumerate(measured):
        group = m.setup.method if key == "method" else m.source
        groups.setdefault(group, []).append(i)
    out = []
    for group, index in sorted(groups.items()):
        median, within = stats(predicted[index], values[index])
        out.append((group, len(index), median, within))
    return out
