"""Figure 6: one scheduled day (what the schedule and the models sensor launch) against
``gpuprice run --no-reports`` for the same date (target: <= 2x).

The scheduled day is two runs, each launched the way the UI's run launcher and ``dagster job
launch`` start a run: a new process that loads the code location and executes the job with its
executor (``dagster job execute -m gpuprice.pipelines.definitions``), against a persistent
instance under ``$GPUPRICE_HOME/dagster`` made from pipelines/dagster.yaml:

1. ``daily_scrape`` for the partition (reference data and every provider);
2. ``daily_models`` for the partition (what the models sensor requests when the scrape ends).

The CLI does the same work in one process. Each measurement gets a fresh ``GPUPRICE_HOME``;
the two paths alternate so both see the same machine load; medians are reported.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

from bench.end_to_end import _clean_env, measure_process, run_command
from bench.figures import Bound, Figure
from gpuprice.pipelines.instance import dagster_home
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE, newest_archive_date

RATIO_TARGET = 2.0
SCHEDULED_JOBS = ("daily_scrape", "daily_models")
_REPO = Path(__file__).resolve().parent.parent


def job_command(job: str, partition: str) -> list[str]:
    dagster = Path(sys.executable).with_name("dagster")
    entry = [str(dagster)] if dagster.exists() else [sys.executable, "-m", "dagster"]
    return [
        *entry,
        *("job", "execute", "-m", "gpuprice.pipelines.definitions", "-a", "defs", "-j", job),
        *("--tags", json.dumps({"dagster/partition": partition})),
    ]


def _scheduled_day(partition: str) -> float:
    """Wall seconds of the scheduled day's runs, one after the other, in a fresh home."""
    total = 0.0
    with tempfile.TemporaryDirectory(prefix="gpuprice-bench-scheduled-") as tmp:
        home = Path(tmp)
        env = _clean_env(home)
        env["DAGSTER_HOME"] = str(dagster_home(home))  # what `make dev` sets
        for job in SCHEDULED_JOBS:
            stats = measure_process(job_command(job, partition), env=env, cwd=_REPO)
            if stats.returncode != 0:
                raise RuntimeError(f"dagster job {job} exited {stats.returncode}: {stats.stderr_tail[-500:]}")
            total += stats.wall_s
    return total


def _cli_day(partition: str) -> float:
    with tempfile.TemporaryDirectory(prefix="gpuprice-bench-cli-") as tmp:
        stats = measure_process(run_command(partition), env=_clean_env(Path(tmp)), cwd=_REPO)
    if stats.returncode != 0:
        raise RuntimeError(f"gpuprice run exited {stats.returncode}: {stats.stderr_tail[-500:]}")
    return stats.wall_s


def measure(repeats: int = 3) -> list[Figure]:
    newest = newest_archive_date(SAMPLE_ARCHIVE)
    if newest is None:
        raise FileNotFoundError(f"no recorded pages under {SAMPLE_ARCHIVE}")
    partition = newest.isoformat()
    scheduled, cli = [], []
    for _ in range(repeats):
        cli.append(_cli_day(partition))
        scheduled.append(_scheduled_day(partition))
    return [
        Figure(
            name="scheduled.daily_partition_wall_s",
            value=statistics.median(scheduled),
            unit="s",
            baseline=f"`gpuprice run --no-reports --date {partition}` (the same work in one process)",
            baseline_value=statistics.median(cli),
            ratio_meaning="times the CLI's time (daily_scrape + daily_models launched as runs)",
            target=(Bound(on="ratio", op="<=", limit=RATIO_TARGET),),
            details={"scheduled_runs_s": scheduled, "cli_runs_s": cli, "jobs": list(SCHEDULED_JOBS)},
        )
    ]
