"""Figure 4: the daily ``gpuprice run --source archive`` end to end, with and without the week's
reports: absolute wall time and peak RSS, against a budget (the daily run of ten providers on the
sample archive: under 20 s on this 2-core machine). No ratio to ``import dagster``: a daily batch
job is judged by its own time.

The command runs as a subprocess of this one, measured by ``bench/launch.py``:

* wall time from start to exit;
* peak RSS: the kernel's high-water mark of the command (``os.wait4`` rusage ``ru_maxrss``) and a
  psutil poll (every 20 ms) of the RSS summed over the command and all its descendants; the larger.

The daily run is measured as it happens every day: on a home that already holds the day before
(a fresh temporary ``GPUPRICE_HOME`` per repeat, primed by an untimed run for the previous date,
so the warehouse, the raw store and the Dagster instance exist and nothing of the measured date
is cached); the median of ``repeats``. The first run on an empty home, which also creates the
warehouse and the instance, is printed beside it (measured once). Every run replays the sample
archive shipped with the code (``GPUPRICE_ARCHIVE`` and ``GPUPRICE_WORKLOADS`` are removed from its
environment), on Dagster's stock storage (pipelines/dagster.yaml).

gpuprice's own modules are compiled to bytecode before the runs, as ``make install`` does.
"""

from __future__ import annotations

import compileall
import datetime as dt
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import tomllib
from pathlib import Path

import psutil
from pydantic import BaseModel

from bench.figures import Bound, Figure
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE, newest_archive_date

# The budget of the daily batch job (issue 31): ten providers on the sample archive.
DAILY_RUN_BUDGET_S = 20.0
_POLL_SECONDS = 0.02
_REPO = Path(__file__).resolve().parent.parent
_LAUNCHER = Path(__file__).with_name("launch.py")


class ProcessStats(BaseModel):
    wall_s: float
    max_rss_mb: float  # kernel high-water mark of the largest single process
    polled_tree_peak_mb: float  # largest sum over the process tree seen by polling
    returncode: int
    stderr_tail: str

    @property
    def peak_rss_mb(self) -> float:
        return max(self.max_rss_mb, self.polled_tree_peak_mb)


def _descendants_rss(process: psutil.Process) -> int:
    """RSS summed over every descendant of ``process`` (not the launcher itself)."""
    total = 0
    try:
        members = process.children(recursive=True)
    except psutil.Error:
        return 0
    for member in members:
        try:
            total += member.memory_info().rss
        except psutil.Error:  # exited between listing and reading
            continue
    return total


def measure_process(cmd: list[str], *, env: dict[str, str], cwd: Path) -> ProcessStats:
    """Run ``cmd`` to completion; wall time and peak memory of it and its descendants.

    The command is started by ``bench/launch.py`` (see there why), which reports the wall time
    and the kernel's high-water mark; this process polls the launcher's descendants meanwhile."""
    with tempfile.TemporaryDirectory(prefix="gpuprice-bench-launch-") as tmp:
        result_file = Path(tmp) / "result.json"
        err_file = Path(tmp) / "stderr"
        with open(Path(tmp) / "stdout", "wb") as out, open(err_file, "wb") as err:
            launcher = subprocess.Popen(
                [sys.executable, str(_LAUNCHER), str(result_file), *cmd],
                env=env,
                cwd=cwd,
                stdout=out,
                stderr=err,
            )
            watched = psutil.Process(launcher.pid)
            peak = 0
            stop = threading.Event()

            def poll() -> None:
                nonlocal peak
                while not stop.is_set():
                    peak = max(peak, _descendants_rss(watched))
                    stop.wait(_POLL_SECONDS)

            poller = threading.Thread(target=poll, daemon=True)
            poller.start()
            launcher.wait()
            stop.set()
            poller.join()
        tail = err_file.read_bytes()[-2000:].decode("utf-8", errors="replace")
        if launcher.returncode != 0 or not result_file.exists():
            raise RuntimeError(
                f"launcher failed ({launcher.returncode}) for {' '.join(cmd)}: {tail.strip()[-500:]}"
            )
        result = json.loads(result_file.read_text(encoding="utf-8"))
    return ProcessStats(
        wall_s=result["wall_s"],
        max_rss_mb=result["max_rss_bytes"] / 1e6,
        polled_tree_peak_mb=peak / 1e6,
        returncode=result["returncode"],
        stderr_tail=tail,
    )


def _clean_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GPUPRICE_ARCHIVE", "GPUPRICE_WORKLOADS", "DAGSTER_HOME")
    }
    env["GPUPRICE_HOME"] = str(home)
    return env


def compile_package() -> None:
    """Compile every gpuprice package folder (pyproject's package-dir) to bytecode, as pip does."""
    settings = tomllib.loads((_REPO / "pyproject.toml").read_text(encoding="utf-8"))
    for folder in settings["tool"]["setuptools"]["package-dir"].values():
        if not compileall.compile_dir(_REPO / folder, quiet=1):
            raise RuntimeError(f"could not compile {_REPO / folder} to bytecode")


def run_command(day: str, *, reports: bool = False) -> list[str]:
    """``gpuprice run`` through the installed console script (the module when there is none)."""
    script = Path(sys.executable).with_name("gpuprice")
    entry = [str(script)] if script.exists() else [sys.executable, "-m", "gpuprice"]
    return [*entry, "run", "--date", day, "--source", "archive", "--reports" if reports else "--no-reports"]


def _prime(cmd: list[str], home: Path) -> None:
    """The untimed run that leaves ``home`` as the day before leaves it."""
    done = subprocess.run(cmd, env=_clean_env(home), cwd=_REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()[-500:]}")


def measure(
    repeats: int = 3,
    *,
    command: list[str] | None = None,
    reports_command: list[str] | None = None,
    prime_command: list[str] | None = None,
) -> list[Figure]:
    """``command`` / ``reports_command`` / ``prime_command`` replace the runs and the priming run
    (the smoke test passes quick ones)."""
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    newest = newest_archive_date(SAMPLE_ARCHIVE)
    if newest is None:
        raise FileNotFoundError(f"no recorded pages under {SAMPLE_ARCHIVE}")
    day = newest.isoformat()
    commands = {
        "no_reports": command or run_command(day),
        "reports": reports_command or run_command(day, reports=True),
        "first_run": command or run_command(day),  # on an empty home
    }
    prime = prime_command or run_command((newest - dt.timedelta(days=1)).isoformat())
    compile_package()
    runs: dict[str, list[ProcessStats]] = {name: [] for name in commands}
    for index in range(repeats):  # alternated, so that all see the same machine load
        for name, cmd in commands.items():
            if name == "first_run" and index > 0:  # a reference figure: measured once
                continue
            with tempfile.TemporaryDirectory(prefix="gpuprice-bench-home-") as home:
                if name != "first_run":
                    _prime(prime, Path(home))
                stats = measure_process(cmd, env=_clean_env(Path(home)), cwd=_REPO)
            if stats.returncode != 0:
                raise RuntimeError(
                    f"{' '.join(cmd)} exited {stats.returncode}: {stats.stderr_tail.strip()[-500:]}"
                )
            runs[name].append(stats)
    wall = {name: statistics.median(r.wall_s for r in stats) for name, stats in runs.items()}
    rss = {name: max(r.peak_rss_mb for r in stats) for name, stats in runs.items()}
    details = {
        "commands": {name: " ".join(cmd[-7:]) for name, cmd in commands.items()},
        "archive_date": day,
        "primed_with": " ".join(prime[-6:]),
        "runs": {
            name: [r.model_dump(exclude={"stderr_tail"}) for r in stats] for name, stats in runs.items()
        },
        "peak_rss_mb": rss,
    }
    against_budget = functools.partial(
        Figure,
        baseline=f"the daily run's budget ({DAILY_RUN_BUDGET_S:g} s)",
        baseline_value=DAILY_RUN_BUDGET_S,
        details=details,
    )
    return [
        against_budget(
            name="e2e.run_no_reports_wall_s",
            value=wall["no_reports"],
            unit="s",
            ratio_meaning="share of the budget (daily_scrape + daily_models, the day after)",
            target=(Bound(on="value", op="<=", limit=DAILY_RUN_BUDGET_S),),
        ),
        against_budget(
            name="e2e.run_wall_s",
            value=wall["reports"],
            unit="s",
            ratio_meaning="share of the budget (with the week's reports; reference)",
        ),
        against_budget(
            name="e2e.first_run_wall_s",
            value=wall["first_run"],
            unit="s",
            ratio_meaning="share of the budget (empty home: creates the warehouse and instance; reference)",
        ),
        Figure(
            name="e2e.run_peak_rss_mb",
            value=max(rss.values()),
            unit="MB",
            baseline="the run without reports",
            baseline_value=max(rss["no_reports"], 1e-9),
            ratio_meaning="times the peak of the run without reports (reference)",
            details=details,
        ),
    ]
