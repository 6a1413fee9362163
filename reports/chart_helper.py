"""The helper process of ``reports.drawing``: ``python -m reports.chart_helper``.

Reads pickled chart jobs from stdin and answers each with a pickled ``(key, svg)`` on stdout,
``svg`` being None when drawing failed (the parent then draws that job itself and meets the
error there). Ends at the end of its input. Only ``reports.drawing`` starts it, as its own
child: the pipe carries pickles between two processes of this program, nothing from outside.
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import BinaryIO


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    from gpuprice.gc_tuning import freeze_loaded_code
    from gpuprice.reports import charts  # noqa: F401  matplotlib loads while the parent reads the week's data

    freeze_loaded_code()  # the parent waits for this process to exit: no scan of matplotlib then

    while True:
        try:
            job = pickle.load(requests)
        except EOFError:
            return
        try:
            svg: str | None = str(job.draw())
        except Exception:
            svg = None
        pickle.dump((job.key, svg), replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()


def main() -> None:
    from gpuprice.gc_tuning import tune_for_batch_process

    tune_for_batch_process()  # a process of its own: the console script's tuning is not inherited
    # Replies get a private copy of stdout; anything a library prints goes to stderr instead
    # of into the pickle stream.
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    try:
        serve(sys.stdin.buffer, replies)
    except (BrokenPipeError, KeyboardInterrupt):  # the parent went away: nothing left to do
        pass
    finally:
        try:
            replies.close()
        except BrokenPipeError:
            pass


if __name__ == "__main__":
    main()
