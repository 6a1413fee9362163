"""Draw a week's charts, sharing the work with one helper process when that pays.

Drawing is pure-Python matplotlib work, so threads cannot share it; a second process can. The
helper is a fresh interpreter (``python -P -m reports.chart_helper``), not a fork: a fork of the
Dagster run would count its whole memory twice and inherit the locks of its threads. A fresh
interpreter needs about a second to import matplotlib, so it is started only for a week with
enough charts and only when this process may use a second CPU, and early (``ChartDrawer``
before the week's data is read) so that second overlaps the reading.

This process draws from the back of the queue while a feeder thread hands the helper jobs from
the front, one at a time. Whatever the helper does not deliver (it failed to start, died, or
raised) goes back on the queue and is drawn here, so the charts never depend on the helper.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from markupsafe import Markup

from gpuprice.reports.chart_jobs import ChartJob, unique_jobs

# About 0.1 s a chart here; below ~1.5 s of drawing, the helper's start-up eats the gain.
MIN_CHARTS_FOR_HELPER = 16
HELPER_GRACE_SECONDS = 60.0  # a helper silent this long after the queue ran dry is stopped
_PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def helper_pays(chart_count: int) -> bool:
    return chart_count >= MIN_CHARTS_FOR_HELPER and usable_cpus() >= 2


def helper_command() -> list[str]:
    # -P: the working directory does not go on the helper's path, so a `reports` package
    # there cannot stand in for this one (PYTHONPATH, set below, points at this one).
    return [sys.executable, "-P", "-m", "gpuprice.reports.chart_helper"]


def helper_env() -> dict[str, str]:
    """This environment, with this package first on the path: the helper imports the same
    code however this process found it (installed, a checkout, a test run)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_PACKAGE_ROOT), env.get("PYTHONPATH")]))
    return env


class _Helper:
    """The helper process and the thread that feeds it."""

    def __init__(self, command: Sequence[str]) -> None:
        self._process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=helper_env(),
        )
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def start_feeding(self, queue: deque[ChartJob], drawn: dict[str, Markup]) -> None:
        self._thread = threading.Thread(
            target=self._feed, args=(queue, drawn), name="chart-helper-feeder", daemon=True
        )
        self._thread.start()

    def _feed(self, queue: deque[ChartJob], drawn: dict[str, Markup]) -> None:
        requests, replies = self._process.stdin, self._process.stdout
        assert requests is not None and replies is not None
        while not self._stopping.is_set():
            try:
                job = queue.popleft()
            except IndexError:
                return
            try:
                pickle.dump(job, requests, protocol=pickle.HIGHEST_PROTOCOL)
                requests.flush()
                key, svg = pickle.load(replies)
            except Exception:
                queue.append(job)  # this process draws it
                return
            if key != job.key or not isinstance(svg, str):
                queue.append(job)  # the helper could not draw it; drawing it here shows why
                continue
            drawn[key] = Markup(svg)

    def finish(self, *, wait_for_job: bool = True) -> None:
        """End the helper: after the job in flight (if ``wait_for_job``) at the end of its
        input; at once when it never got a job (it may still be loading matplotlib) or when
        the caller is failing anyway."""
        self._stopping.set()
        if self._thread is None or not wait_for_job:
            self._process.kill()  # the feeder's read ends; its job goes back on the queue
        if self._thread is not None:
            self._thread.join(HELPER_GRACE_SECONDS)
            if self._thread.is_alive():  # a helper that hangs
                self._process.kill()
                self._thread.join()
        try:
            if self._process.stdin is not None:
                self._process.stdin.close()  # end of input: the helper exits
        except OSError:  # it has gone already
            pass
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()


# A helper started ahead of the charts (``prestart_helper``), waiting for the next ChartDrawer.
_waiting_helper: _Helper | None = None


def prestart_helper() -> None:
    """Start a helper now for the next ``ChartDrawer`` that uses one (when a second CPU is there).

    For a caller that knows charts come later: ``gpuprice run`` starts it before the day's run,
    which keeps one CPU busy, so matplotlib loads in the helper meanwhile and the helper draws
    from the first chart on. End it with ``end_prestarted_helper`` if no drawer took it."""
    global _waiting_helper
    if _waiting_helper is None and usable_cpus() >= 2:
        try:
            _waiting_helper = _Helper(helper_command())
        except OSError:  # cannot start a process here: the drawer draws everything itself
            _waiting_helper = None


def end_prestarted_helper() -> None:
    """Stop a prestarted helper that no drawer took (nothing to draw, or a failed run)."""
    helper = _take_prestarted_helper()
    if helper is not None:
        helper.finish(wait_for_job=False)


def _take_prestarted_helper() -> _Helper | None:
    global _waiting_helper
    helper, _waiting_helper = _waiting_helper, None
    return helper


class ChartDrawer:
    """Draws chart jobs, with a helper process when ``use_helper`` (see :func:`helper_pays`).

    Use as a context manager: the helper starts on entry (or a prestarted one is taken), so it
    loads matplotlib while the caller reads the week's data, and always ends on exit.
    """

    def __init__(self, *, use_helper: bool, command: Sequence[str] | None = None) -> None:
        self._use_helper = use_helper
        self._own_command = command is not None  # a prestarted helper runs the usual command
        self._command = list(command) if command is not None else helper_command()
        self._helper: _Helper | None = None

    def __enter__(self) -> ChartDrawer:
        if self._use_helper:
            self._helper = None if self._own_command else _take_prestarted_helper()
            if self._helper is None:
                try:
                    self._helper = _Helper(self._command)
                except OSError:  # cannot start a process here: draw everything in this one
                    self._helper = None
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._end_helper(wait_for_job=exc is None)

    def _end_helper(self, *, wait_for_job: bool = True) -> None:
        if self._helper is not None:
            helper, self._helper = self._helper, None
            helper.finish(wait_for_job=wait_for_job)

    def draw(self, jobs: Sequence[ChartJob]) -> dict[str, Markup]:
        """SVG per job key, each distinct key drawn once. The helper serves one call only."""
        queue: deque[ChartJob] = deque(unique_jobs(jobs))
        drawn: dict[str, Markup] = {}
        if self._helper is not None and queue:
            self._helper.start_feeding(queue, drawn)
        try:
            _draw_here(queue, drawn)
        except BaseException:
            self._end_helper(wait_for_job=False)
            raise
        self._end_helper()
        _draw_here(queue, drawn)  # whatever the helper handed back
        return drawn


def _draw_here(queue: deque[ChartJob], drawn: dict[str, Markup]) -> None:
    while True:
        try:
            job = queue.pop()
        except IndexError:
            return
        drawn[job.key] = job.draw()


def draw_charts(jobs: Sequence[ChartJob]) -> dict[str, Markup]:
    """Draw ``jobs`` in this process (no helper): for a single page or a handful of charts."""
    with ChartDrawer(use_helper=False) as drawer:
        return drawer.draw(jobs)
