"""`gpuprice ARGS...` that pauses before one of its warehouse writer connections.

For the mid-run lock test: before the writer connection of the step that computes the asset
named by GPUPRICE_TEST_PAUSE_IN (its function's name, e.g. ``workload_rankings``), this prints
``PAUSED`` on stdout and waits for a line on stdin, so the test can have another process take the
warehouse's lock at exactly that point of the run.

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
        print("PAUSED", flush=True)
        sys.stdin.readline()
    return _connect(*args, **kwargs)


resources.connect_writer = _pausing_connect  # type: ignore[assignment]

if __name__ == "__main__":
    from gpuprice.cli import main

    main(sys.argv[1:])
