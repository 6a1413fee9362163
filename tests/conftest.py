"""Shared fixtures: a temporary GPUPRICE_HOME and a CLI runner that captures exit codes."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import pytest

# Public measurements and the command-line contract, copied into the repository with their
# sources (tests/data/README.md): the suite needs nothing beside the checkout.
TEST_DATA = Path(__file__).resolve().parent / "data"
OBSERVED_PRICES = Path(__file__).resolve().parents[1] / "scrapers" / "data" / "observed_prices.csv"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("GPUPRICE_HOME", str(folder))
    monkeypatch.delenv("GPUPRICE_ARCHIVE", raising=False)
    return folder


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Run `gpuprice ARGS...` in process; returns exit code, stdout and stderr."""
    from gpuprice.cli import main

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        code = 0
        try:
            main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def make_offer(**overrides):
    from gpuprice.scrapers.offer import Offer

    base = dict(
        provider="lambda",
        gpu="h100-sxm",
        gpu_raw="NVIDIA H100 SXM",
        gpu_count=1,
        vram_gb=80.0,
        tier="on_demand",
        usd_per_gpu_hour=2.99,
        sku="gpu_1x_h100_sxm",
    )
    base.update(overrides)
    return Offer(**base)


@pytest.fixture
def offer_factory():
    return make_offer


D1, D2, D3, D4 = (dt.date(2026, 10, d) for d in (1, 2, 3, 4))
