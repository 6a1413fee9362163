"""``make dev`` stops everything it started within seconds of Ctrl-C or SIGTERM (pipelines/dev.py).

``dagster dev`` alone did not: on a loaded machine a signal sometimes left its webserver, daemon
and code servers running (they had to be SIGKILLed), and ``make`` forwards SIGTERM only once and
SIGINT not at all. The launcher runs it in a process group of its own and escalates on a clock.
The fast tests use stand-ins for ``dagster dev`` (one that stops on SIGINT, one whose processes
ignore every signal they can); the slow one stops the real services once they serve the UI.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

# The launcher's bound (GRACE_S + TERM_S = 8 s) plus the slack a loaded 2-core machine needs to
# schedule the processes that act on the signals.
STOP_BOUND_S = 30.0


def _launcher(command: list[str], grace_s: float, term_s: float, env: dict[str, str] | None = None):
    code = (
        "import sys; from gpuprice.pipelines.dev import supervise;"
        f" raise SystemExit(supervise({command!r}, grace_s={grace_s}, term_s={term_s}))"
    )
    return subprocess.Popen([sys.executable, "-c", code], env=env, start_new_session=True)


def _wait_for(path: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def _live_pids(pgid: int) -> list[int]:
    """Members of the process group ``pgid`` that are not zombies."""
    pids = []
    for process in psutil.process_iter(["status"]):
        with contextlib.suppress(psutil.Error, OSError):
            if os.getpgid(process.pid) == pgid and process.info["status"] != psutil.STATUS_ZOMBIE:
                pids.append(process.pid)
    return pids


def _leader_of(launcher: subprocess.Popen, timeout: float = 60.0) -> int:
    """The pid of the command the launcher started (the leader of the group it stops)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(psutil.Error):
            children = psutil.Process(launcher.pid).children()
            if children:
                return children[0].pid
        time.sleep(0.05)
    raise AssertionError("the launcher started nothing")


def _stop(launcher: subprocess.Popen, sig: int, pgid: int) -> float:
    """Send ``sig`` to the launcher; the seconds until it exited and the group was gone."""
    started = time.monotonic()
    launcher.send_signal(sig)
    try:
        launcher.wait(timeout=STOP_BOUND_S)
        while _live_pids(pgid) and time.monotonic() - started < STOP_BOUND_S:
            time.sleep(0.1)
    finally:
        for pid in _live_pids(pgid):  # never leave anything behind, even when the test fails
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
    return time.monotonic() - started


def test_a_stop_signal_reaches_dagster_dev_as_sigint_and_its_orderly_exit_ends_the_launcher(tmp_path: Path):
    ready, got = tmp_path / "ready", tmp_path / "got_sigint"
    polite = (
        "import pathlib, signal, sys, time\n"
        f"def stop(signum, frame):\n    pathlib.Path({str(got)!r}).write_text(str(signum)); sys.exit(0)\n"
        "signal.signal(signal.SIGINT, stop)\n"
        f"pathlib.Path({str(ready)!r}).touch()\n"
        "time.sleep(600)\n"
    )
    launcher = _launcher([sys.executable, "-c", polite], grace_s=120.0, term_s=1.0)
    _wait_for(ready)
    leader = _leader_of(launcher)
    assert os.getpgid(leader) == leader != os.getpgid(launcher.pid)  # a process group of its own
    took = _stop(launcher, signal.SIGTERM, leader)
    assert got.read_text() == str(int(signal.SIGINT))
    assert launcher.returncode == 128 + signal.SIGTERM
    assert took < 120.0  # ended by its own exit, not by the escalation after grace_s
    assert not _live_pids(leader)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_processes_that_ignore_signals_are_killed_on_the_clock(tmp_path: Path, sig: int):
    """A leader and a child that ignore SIGINT and SIGTERM (a signal dagster dev lost, services
    that never got the shutdown message): SIGKILL after grace_s + term_s, nothing left."""
    ready = tmp_path / "ready"
    child = (
        "import pathlib, signal, time\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN); signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"pathlib.Path({str(ready)!r}).touch(); time.sleep(600)\n"
    )
    stubborn = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN); signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"subprocess.Popen([sys.executable, '-c', {child!r}]); time.sleep(600)\n"
    )
    launcher = _launcher([sys.executable, "-c", stubborn], grace_s=1.0, term_s=1.0)
    _wait_for(ready)
    leader = _leader_of(launcher)
    assert len(_live_pids(leader)) == 2
    took = _stop(launcher, sig, leader)
    assert launcher.returncode == 128 + sig
    assert not _live_pids(leader), "processes of the group survived"
    assert took < STOP_BOUND_S


def test_a_command_that_exits_on_its_own_passes_its_code_and_leaves_nothing(tmp_path: Path):
    ready = tmp_path / "ready"
    child = f"import pathlib, time; pathlib.Path({str(ready)!r}).touch(); time.sleep(600)"
    exits = (
        "import subprocess, sys, time, pathlib\n"
        f"subprocess.Popen([sys.executable, '-c', {child!r}])\n"
        f"while not pathlib.Path({str(ready)!r}).exists(): time.sleep(0.05)\n"
        "sys.exit(3)\n"
    )
    launcher = _launcher([sys.executable, "-c", exits], grace_s=1.0, term_s=1.0)
    leader = _leader_of(launcher)
    assert launcher.wait(timeout=STOP_BOUND_S + 60) == 3
    assert not _live_pids(leader)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
@pytest.mark.dagster_services
def test_make_dev_launcher_stops_the_real_services_on_sigterm(tmp_path: Path):
    """What ``make dev`` runs, on a free port: once the UI answers, SIGTERM stops the webserver,
    the daemon and the code servers within the bound."""
    from gpuprice.pipelines.instance import dagster_home

    if not (Path(sys.executable).parent / "dagster").exists():
        pytest.skip(f"dagster is not installed beside {sys.executable} (make install)")
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPRICE_", "DAGSTER_"))}
    env |= {"GPUPRICE_HOME": str(home), "GPUPRICE_SOURCE": "archive", "DAGSTER_HOME": str(dagster_home(home))}
    port = _free_port()
    log = tmp_path / "dev.log"
    with open(log, "wb") as out:
        launcher = subprocess.Popen(
            [sys.executable, "-m", "gpuprice.pipelines.dev", "127.0.0.1", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    leader = _leader_of(launcher)
    try:
        deadline = time.monotonic() + 300  # the code location's load on a busy 2-core machine
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/server_info", timeout=5).status_code == 200:
                    break
            assert launcher.poll() is None, log.read_text(errors="replace")[-3000:]
            time.sleep(1)
        else:
            raise AssertionError(f"the UI never answered: {log.read_text(errors='replace')[-3000:]}")
        assert len(_live_pids(leader)) >= 3  # dagster dev, webserver, daemon (and code servers)
    finally:
        took = _stop(launcher, signal.SIGTERM, leader)
    assert launcher.returncode == 128 + signal.SIGTERM
    assert not _live_pids(leader), "processes of dagster dev's group survived"
    assert took < STOP_BOUND_S, took
