"""Shared by the config.json reader tests: the case shape (a repository's config fields against its
published parameter count) and the check that ``fit`` and ``estimate --config`` answer on a config
the way an acceptance check reads them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from gpuprice.models.fit_verdict import VERDICTS


class Case(NamedTuple):
    repo: str
    total_b: float
    active_b: float | None
    published: str
    config: dict[str, Any]


def assert_fit_and_estimate_answer(cli: Callable[..., Any], tmp_path: Path, config: dict[str, Any]) -> dict:
    """``fit`` and ``estimate --config`` (LoRA, one H100) exit 0; the fit's peak lies in its band
    and carries a verdict, the estimate a throughput. Returns the fit's answer."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    fit = cli("fit", "--config", str(path), "--method", "lora", "--gpu", "h100-sxm", "--json")
    assert fit.code == 0, fit.err
    answer = json.loads(fit.out)
    assert answer["verdict"] in VERDICTS
    assert 0 < answer["band_gb"]["low"] <= answer["per_gpu_gb"] <= answer["band_gb"]["high"]
    options = ("--method", "lora", "--gpu", "h100-sxm", "--tokens", "1B", "--json")
    estimate = cli("estimate", "--config", str(path), *options)
    assert estimate.code == 0, estimate.err
    assert json.loads(estimate.out)["tokens_per_sec_per_gpu"] > 0
    return answer
