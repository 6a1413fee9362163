"""Figure 5: ``gpuprice backfill`` over one and five years, against one ``gpuprice run --no-reports``.

The archive is synthetic, built from the sample archive: per provider a recording every week
for five years (its newest sample page, with a note of the recording date appended, so every
recording is distinct content that must be parsed; the days in between replay the latest one,
as the archive contract says). Each command runs as a subprocess in a fresh ``GPUPRICE_HOME``
(``end_to_end.measure_process``: wall time and peak RSS of the process tree).

Figures: the per-date cost of a backfill against one daily run for the newest date (target
<= 1/20), its growth from 365 to 1,826 dates (linear: <= 5.5x for 5x the dates), and the peak
RSS of the five-year backfill (< 1 GB).
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
PER_DATE_RATIO_TARGET = 1 / 20
GROWTH_TARGET = 5.5
PEAK_RSS_TARGET_MB = 1000.0
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


def _measure(cmd: list[str], archive: Path) -> ProcessStats:
    with tempfile.TemporaryDirectory(prefix="gpuprice-bench-home-") as home:
        env = {**_clean_env(Path(home)), "GPUPRICE_ARCHIVE": str(archive)}
        stats = measure_process(cmd, env=env, cwd=_REPO)
    if stats.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd[-8:])} exited {stats.returncode}: {stats.stderr_tail.strip()[-500:]}"
        )
    return stats


def measure(short_days: int = 365, long_days: int = 1826, end: dt.date = END) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="gpuprice-bench-archive-") as tmp:
        archive = build_archive(Path(tmp), long_days, end)
        daily = _measure(
            _gpuprice("run", "--date", end.isoformat(), "--source", "archive", "--no-reports"), archive
        )
        runs: dict[int, ProcessStats] = {}
        for days in (short_days, long_days):
            first = end - dt.timedelta(days=days - 1)
            cmd = _gpuprice(
                "backfill", "--from", first.isoformat(), "--to", end.isoformat(), "--source", "archive"
            )
            runs[days] = _measure(cmd, archive)
    details = {
        "archive": f"synthetic: {len(PROVIDERS)} providers, a distinct recording every {RECORDING_EVERY_DAYS} days",
        "daily_run_s": daily.wall_s,
        "backfill_s": {str(days): stats.wall_s for days, stats in runs.items()},
        "backfill_peak_rss_mb": {str(days): stats.peak_rss_mb for days, stats in runs.items()},
        "cpus": os.cpu_count(),
    }
    per_date = functools.partial(
        Figure,
        unit="s/date",
        baseline="one `gpuprice run --no-reports` for the newest date",
        baseline_value=daily.wall_s,
        ratio_meaning="per-date share of one daily run",
        target=(Bound(on="ratio", op="<=", limit=PER_DATE_RATIO_TARGET),),
        details=details,
    )
    short, long = runs[short_days], runs[long_days]
    return [
        per_date(name=f"backfill.per_date_{short_days}_dates", value=short.wall_s / short_days),
        per_date(name=f"backfill.per_date_{long_days}_dates", value=long.wall_s / long_days),
        Figure(
            name="backfill.growth_5y_vs_1y",
            value=long.wall_s,
            unit="s",
            baseline=f"the {short_days}-date backfill",
            baseline_value=short.wall_s,
            ratio_meaning=f"times the {short_days}-date wall time for {long_days / short_days:.1f}x the dates",
            target=(Bound(on="ratio", op="<=", limit=GROWTH_TARGET),),
            details=details,
        ),
        Figure(
            name="backfill.peak_rss_mb_5y",
            value=long.peak_rss_mb,
            unit="MB",
            baseline=f"the {short_days}-date backfill",
            baseline_value=short.peak_rss_mb,
            ratio_meaning="times the one-year peak",
            target=(Bound(on="value", op="<=", limit=PEAK_RSS_TARGET_MB),),
            details=details,
        ),
    ]
