"""Figure 5: ``gpuprice backfill`` over one and five years: absolute wall time and peak RSS,
against a budget (five years under 20 minutes on this 2-core machine, on Dagster's stock storage).

The archive is synthetic, built from the sample archive: per provider a recording every week
for five years (its newest sample page, with a note of the recording date appended, so every
recording is distinct content that must be parsed; the days in between replay the latest one,
as the archive contract says). Each command runs as a subprocess in a fresh ``GPUPRICE_HOME``
(``end_to_end.measure_process``: wall time and peak RSS of the process tree), with
``GPUPRICE_FIRST_DAY`` at the archive's first date: the partitions start where that data starts.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import sys
import tempfile
from pathlib import Path

from bench.end_to_end import ProcessStats, _clean_env, measure_process
from bench.figures import Bound, Figure
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE, archived_pages
from gpuprice.scrapers.offer import PROVIDERS

END = dt.date(2026, 10, 6)
RECORDING_EVERY_DAYS = 7
FIVE_YEAR_BUDGET_S = 20 * 60.0
_REPO = Path(__file__).resolve().parent.parent


def build_archive(root: Path, days: int, end: dt.date = END, every: int = RECORDING_EVERY_DAYS) -> Path:
    """A synthetic archive of ``days`` dates ending ``end``: one distinct recording every ``every`` days."""
    for provider in PROVIDERS:
        newest = max(archived_pages(SAMPLE_ARCHIVE, provider), key=lambda p: p.page_date)
        body = newest.path.read_bytes()
        folder = root / provider
        folder.mkdir(parents=True, exist_ok=True)
        for age in range(0, days, every):
            day = end - dt.timedelta(days=days - 1 - age)
            note = (
                (b"\n" * (1 + age // every))
                if newest.kind == "json"
                else f"\n<!-- recorded {day} -->\n".encode()
            )
            (folder / f"{day.isoformat()}.{newest.kind}").write_bytes(body + note)
    return root


def _gpuprice(*args: str) -> list[str]:
    script = Path(sys.executable).with_name("gpuprice")
    entry = [str(script)] if script.exists() else [sys.executable, "-m", "gpuprice"]
    return [*entry, *args]


def _measure(cmd: list[str], archive: Path, first_day: dt.date) -> ProcessStats:
    with tempfile.TemporaryDirectory(prefix="gpuprice-bench-home-") as home:
        env = {
            **_clean_env(Path(home)),
            "GPUPRICE_ARCHIVE": str(archive),
            "GPUPRICE_FIRST_DAY": first_day.isoformat(),
        }
        stats = measure_process(cmd, env=env, cwd=_REPO)
    if stats.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd[-8:])} exited {stats.returncode}: {stats.stderr_tail.strip()[-500:]}"
        )
    return stats


def measure(short_days: int = 365, long_days: int = 1826, end: dt.date = END) -> list[Figure]:
    first_day = end - dt.timedelta(days=long_days - 1)
    with tempfile.TemporaryDirectory(prefix="gpuprice-bench-archive-") as tmp:
        archive = build_archive(Path(tmp), long_days, end)
        runs: dict[int, ProcessStats] = {}
        for days in (short_days, long_days):
            first = end - dt.timedelta(days=days - 1)
            cmd = _gpuprice(
                "backfill", "--from", first.isoformat(), "--to", end.isoformat(), "--source", "archive"
            )
            runs[days] = _measure(cmd, archive, first_day)
    details = {
        "archive": f"synthetic: {len(PROVIDERS)} providers, a distinct recording every {RECORDING_EVERY_DAYS} days",
        "backfill_s": {str(days): stats.wall_s for days, stats in runs.items()},
        "backfill_peak_rss_mb": {str(days): stats.peak_rss_mb for days, stats in runs.items()},
        "cpus": os.cpu_count(),
    }
    short, long = runs[short_days], runs[long_days]
    budget = functools.partial(
        Figure,
        unit="s",
        baseline=f"the five-year budget ({FIVE_YEAR_BUDGET_S / 60:g} min)",
        baseline_value=FIVE_YEAR_BUDGET_S,
        ratio_meaning="share of the budget",
        details=details,
    )
    return [
        budget(name=f"backfill.wall_s_{short_days}_dates", value=short.wall_s),
        budget(
            name=f"backfill.wall_s_{long_days}_dates",
            value=long.wall_s,
            target=(Bound(on="value", op="<=", limit=FIVE_YEAR_BUDGET_S),),
        ),
        Figure(
            name="backfill.peak_rss_mb_5y",
            value=long.peak_rss_mb,
            unit="MB",
            baseline=f"the {short_days}-date backfill",
            baseline_value=short.peak_rss_mb,
            ratio_meaning="times the one-year peak (reference)",
            details=details,
        ),
    ]
