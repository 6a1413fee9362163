"""`gpuprice ARGS...` that pauses before one of its warehouse writer connections.

For the mid-run lock test: before the writer connection of the step that computes the asset
named by GPUPRICE_TEST_PAUSE_IN (its function's name, e.g. ``workload_rankings``), this prints
``PAUSED`` on stdout and waits for a line on stdin, so the test can have another process take the
warehouse's lock at exactly that point of the run. With GPUPRICE_TEST_FILL (a folder) it fills that
folder's filesystem instead (a file of zeros until the disk is full) and goes on: a disk that
fills mid-run.

Usage: PYTHONPATH=tests python -m faults.pause_before_writer run --date YYYY-MM-DD ...
"""

from __future__ import annotations

import os
import sys
import traceback

import gpuprice.pipelines.resources as resources

PAUSE_IN = os.environ["GPUPRICE_TEST_PAUSE_IN"]
_connect = resources.connect_writer  # what every step's writer connection goes through
_paused = False


def _pausing_connect(*args, **kwargs):
    global _paused
    if not _paused and any(frame.name == PAUSE_IN for frame in traceback.extract_stack()):
        _paused = True
        fill = os.environ.get("GPUPRICE_TEST_FILL")
        if fill:
            _fill(fill)
        else:
            print("PAUSED", flush=True)
            sys.stdin.readline()
    return _connect(*args, **kwargs)


def _fill(folder: str) -> None:
    """Write zeros into ``folder``/filler until the filesystem refuses (ENOSPC)."""
    block = b"\0" * (1 << 20)
    with open(os.path.join(folder, "filler"), "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(block)
        except OSError:
            pass
    small = b"\0" * 4096
    with open(os.path.join(folder, "filler-tail"), "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(small)
        except OSError:
            pass
    leave = int(os.environ.get("GPUPRICE_TEST_FILL_LEAVE", "0"))  # bytes given back: a nearly full disk
    if leave:
        filler = os.path.join(folder, "filler")
        os.truncate(filler, max(0, os.path.getsize(filler) - leave))


resources.connect_writer = _pausing_connect  # type: ignore[assignment]

if __name__ == "__main__":
    from gpuprice.cli import main

    main(sys.argv[1:])
