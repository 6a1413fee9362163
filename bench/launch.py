"""Run one command and write its wall time and peak RSS as JSON: ``python launch.py RESULT.json CMD...``.

Why a separate small process: Linux counts the memory a process had *before* ``exec`` in its
``ru_maxrss`` (fork copies the parent's resident pages, exec keeps the old high-water mark). A
command started straight from the benchmark process, which holds gigabytes after the warehouse
figure, would inherit that size. Started from this launcher (a bare interpreter, ~10 MB), the
command's high-water mark is its own. Standard library only, so it starts fast.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: launch.py RESULT.json CMD [ARGS...]", file=sys.stderr)
        return 2
    result_path, cmd = argv[0], argv[1:]
    start = time.perf_counter()
    pid = os.posix_spawnp(cmd[0], cmd, os.environ)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    # ru_maxrss: kilobytes on Linux, bytes on macOS
    max_rss_bytes = usage.ru_maxrss if sys.platform == "darwin" else usage.ru_maxrss * 1024
    with open(result_path, "w", encoding="utf-8") as out:
        json.dump(
            {"wall_s": wall, "max_rss_bytes": max_rss_bytes, "returncode": os.waitstatus_to_exitcode(status)},
            out,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
