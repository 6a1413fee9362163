"""Shared fixtures: a temporary GPUPRICE_HOME and a CLI runner that captures exit codes."""

from __future__ import annotations

import datetime as dt
import tomllib
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


@pytest.fixture(scope="session")
def holdout_scores():
    """Every throughput holdout row predicted by constants that never saw its source family
    (``models/calibration/throughput_holdout.py``), computed once for every test that reads it."""
    from gpuprice.models.calibration.throughput_holdout import score_holdout

    return score_holdout()


@pytest.fixture(scope="session")
def every(holdout_scores):
    """All unseen throughput runs, scored: the per-family test files select theirs from it."""
    return holdout_scores


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


def make_public_report_row(snapshot_date, usd_per_gpu_hour, **overrides) -> dict:
    """One row of a public price report (an import's or the bundled reports' frame): a Lambda H100."""
    row = dict(
        snapshot_date=snapshot_date,
        provider="lambda",
        sku="H100 x1 [on_demand]",
        gpu="h100-sxm",
        gpu_raw="H100",
        gpu_count=1,
        tier="on_demand",
        community=False,
        usd_per_gpu_hour=usd_per_gpu_hour,
        price_basis="list",
    )
    row.update(overrides)
    return row


@pytest.fixture
def offer_factory():
    return make_offer


D1, D2, D3, D4 = (dt.date(2026, 10, d) for d in (1, 2, 3, 4))


# ----- the code under test changing while the suite runs -------------------------------------------
# A worktree edited or rebased while a long test runs mixes two versions of the product inside one
# test: a killed-backfill test once compared a reference made by the old ranking query with a rerun
# made by the new one, and only the rankings differed. A failing test says so when it happens.
REPO = Path(__file__).resolve().parents[1]
_PACKAGE_DIRS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
_SOURCE_DIRS = [REPO / folder for folder in _PACKAGE_DIRS.values()]
_source_at_start: dict[str, tuple[int, int]] = {}


def source_fingerprint() -> dict[str, tuple[int, int]]:
    """(mtime_ns, size) of every file of the product's package folders, by path in the repository."""
    files: dict[str, tuple[int, int]] = {}
    for folder in _SOURCE_DIRS:
        for path in folder.rglob("*"):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            try:
                stat = path.stat()
            except OSError:  # removed between the listing and the stat: counts as changed below
                continue
            files[str(path.relative_to(REPO))] = (stat.st_mtime_ns, stat.st_size)
    return files


def changed_sources(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[str]:
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


def pytest_sessionstart(session: pytest.Session) -> None:
    _source_at_start.update(source_fingerprint())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if report.failed and _source_at_start:
        changed = changed_sources(_source_at_start, source_fingerprint())
        if changed:
            shown = ", ".join(changed[:10]) + (f" and {len(changed) - 10} more" if len(changed) > 10 else "")
            report.sections.append(
                (
                    "the product's files changed while the suite ran",
                    f"{len(changed)} files changed since the session started (an edit or a rebase in this"
                    f" checkout?): {shown}. A test spanning the change may have run two versions of the code.",
                )
            )
    return report
