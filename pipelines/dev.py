"""``make dev``: ``dagster dev`` on the code location, stopped within seconds on Ctrl-C or SIGTERM.

``dagster dev`` handles SIGINT and SIGTERM alike: it writes a shutdown message to its webserver
and daemon, waits up to 60 s for each, then stops its code servers. On a loaded machine that
took minutes, and a second signal arriving meanwhile interrupts that cleanup: ``dagster dev``
exits and leaves its webserver, daemon and code servers running (they only act on the shutdown
message, not on their parent's exit). ``make`` adds its own gap: it forwards SIGTERM to the
recipe but not SIGINT, so ``kill -INT`` of ``make dev`` reached nobody.

This launcher starts ``dagster dev`` in a process group of its own, so every process it starts
(webserver, daemon, code servers, the runs they launch) can be stopped together. On the first
SIGINT, SIGTERM or SIGHUP it sends ``dagster dev`` one SIGINT (its orderly shutdown); whatever
of the group is still there ``GRACE_S`` later gets SIGTERM, and ``TERM_S`` after that SIGKILL.
A second signal skips the wait. Runs still executing are interrupted with the rest (their steps
write in transactions: a run stopped mid-write leaves the previous partition).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

import psutil

GRACE_S = 5.0  # dagster dev's own shutdown, before the group is sent SIGTERM
TERM_S = 3.0  # after SIGTERM, before SIGKILL
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_POLL_S = 0.2


def dagster_dev_command(host: str, port: str) -> list[str]:
    """``dagster dev`` from this interpreter's environment, on the project's code location."""
    dagster = os.path.join(os.path.dirname(sys.executable), "dagster")
    return [dagster, "dev", "-m", "gpuprice.pipelines.definitions", "-h", host, "-p", port]


def supervise(command: Sequence[str], *, grace_s: float = GRACE_S, term_s: float = TERM_S) -> int:
    """Run ``command`` in a new process group until it exits or a stop signal arrives, then stop
    the whole group: SIGINT to the leader, SIGTERM to the group ``grace_s`` later, SIGKILL
    ``term_s`` after that (a further signal skips the wait). Returns the command's exit code, or
    128 + the first stop signal."""
    received: list[int] = []
    previous = {
        sig: signal.signal(sig, lambda signum, _frame: received.append(signum)) for sig in _STOP_SIGNALS
    }
    try:
        leader = subprocess.Popen(list(command), start_new_session=True)
        while not received:
            code = leader.poll()
            if code is not None:  # ended on its own (a failed start): stop what it left behind
                _stop_group(leader, [signal.SIGTERM, signal.SIGKILL], term_s, received)
                return code
            time.sleep(_POLL_S)
        if leader.poll() is None:
            leader.send_signal(signal.SIGINT)  # dagster dev's own orderly shutdown
        _wait_gone(leader, grace_s, received)
        _stop_group(leader, [signal.SIGTERM, signal.SIGKILL], term_s, received)
        return 128 + received[0]
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def group_alive(pgid: int) -> bool:
    """Whether a live process of the group ``pgid`` is left. Zombies do not count: once its parent
    is gone a member waits for whoever adopts it to reap it, which some containers' first process
    never does."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member running as another user: still there
        return True
    for process in psutil.process_iter(["status"]):
        with contextlib.suppress(psutil.Error, OSError):
            if process.info["status"] != psutil.STATUS_ZOMBIE and os.getpgid(process.pid) == pgid:
                return True
    return False


def _wait_gone(leader: subprocess.Popen[bytes], seconds: float, received: list[int]) -> None:
    """Until the leader's group is gone, ``seconds`` have passed or one more signal arrives."""
    deadline, signals = time.monotonic() + seconds, len(received)
    while time.monotonic() < deadline and len(received) == signals:
        leader.poll()  # reap the leader: a zombie keeps the group alive
        if not group_alive(leader.pid):
            return
        time.sleep(_POLL_S)


def _stop_group(
    leader: subprocess.Popen[bytes], sigs: list[signal.Signals], wait_s: float, received: list[int]
) -> None:
    for sig in sigs:
        leader.poll()
        if not group_alive(leader.pid):
            return
        try:
            os.killpg(leader.pid, sig)
        except ProcessLookupError:
            return
        _wait_gone(leader, wait_s, received)
    leader.poll()


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m gpuprice.pipelines.dev HOST PORT`` (``make dev``, with DAGSTER_HOME set)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: python -m gpuprice.pipelines.dev HOST PORT", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(supervise(dagster_dev_command(*args)))


if __name__ == "__main__":
    main()
