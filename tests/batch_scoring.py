"""Scoring measured runs the way an acceptance check does: `fit --batch` / `estimate --batch` on a
CSV of contract columns, one JSON answer per row. Shared by the unseen-source tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

Row = dict[str, str]


def batch_answers(
    cli: Callable[..., Any], command: str, batch: Path, count: int, *options: str
) -> list[dict]:
    """Run ``gpuprice COMMAND --batch BATCH [options]``; it must succeed with ``count`` answers."""
    result = cli(command, "--batch", str(batch), *options)
    assert result.code == 0, result.err
    answers = [json.loads(line) for line in result.out.splitlines() if line.strip()]
    assert len(answers) == count, (len(answers), count)
    return answers


def completed_peaks(
    rows: Sequence[Row], answers: Sequence[dict], measured_gb: Callable[[Row], float]
) -> tuple[list[tuple[Row, dict]], np.ndarray, np.ndarray]:
    """The runs that completed (not ``OOM``) with their answers, predicted and measured GB."""
    done = [(r, a) for r, a in zip(rows, answers, strict=True) if r["peak_gb_per_gpu"] != "OOM"]
    predicted = np.array([a["per_gpu_gb"] for _, a in done])
    return done, predicted, np.array([measured_gb(r) for r, _ in done])


def oom_runs_judged_to_fit(
    rows: Sequence[Row], answers: Sequence[dict], key: Callable[[Row], Hashable]
) -> set[Hashable]:
    """Keys of the out-of-memory runs the answers do not judge ``does_not_fit``."""
    return {
        key(r)
        for r, a in zip(rows, answers, strict=True)
        if r["peak_gb_per_gpu"] == "OOM" and a["verdict"] != "does_not_fit"
    }


def throughput_scores(answers: Sequence[dict], measured: np.ndarray) -> tuple[float, float]:
    """(median |error|, share within 25 %) of the answers' tokens/s per GPU against measured."""
    errors = np.array([a["tokens_per_sec_per_gpu"] for a in answers]) / measured - 1
    return float(np.median(np.abs(errors))), float(np.mean(np.abs(errors) <= 0.25))
