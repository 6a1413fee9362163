"""Free space before a write: a command that would fill the disk says so in one line first.

A full disk in the middle of a run costs every later step (each fails on its own, with DuckDB's,
SQLite's and Dagster's messages); the data stays consistent, but nothing tells the user what to
do. So the writing commands check the space they will need before they start, and any write
that still meets a full disk is reported the same way (:func:`no_space_message`).
"""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

from gpuprice.errors import BadInput

MB = 1_000_000
# What a run writes besides the warehouse: raw pages, Parquet exports, reports, Dagster's event
# log (a daily run of the ten providers: ~6 MB; the margin covers a backfill's logs too).
BASE_NEED_BYTES = 64 * MB


class NoSpace(BadInput):
    """Not enough free space on the filesystem holding a path (exit 2, one line)."""


def space_needed(home: Path) -> int:
    """Bytes a writing command may need under ``home``: the warehouse can grow by its own size
    (its WAL and checkpoint), the published copy is written beside the old one before replacing
    it (the warehouse's size again), plus :data:`BASE_NEED_BYTES`."""
    warehouse = home / "warehouse.duckdb"
    size = warehouse.stat().st_size if warehouse.is_file() else 0
    return 2 * size + BASE_NEED_BYTES


def free_bytes(path: Path) -> int:
    """Free bytes (for this user) on the filesystem holding ``path`` or its nearest existing parent."""
    folder = Path(path)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return shutil.disk_usage(folder).free


def check_free_space(home: Path, needed: int | None = None) -> None:
    """NoSpace naming ``home`` when its filesystem has less free space than ``needed`` bytes
    (default: :func:`space_needed`)."""
    needed = space_needed(home) if needed is None else needed
    free = free_bytes(home)
    if free < needed:
        raise NoSpace(no_space_message(home, needed, free))


def no_space_message(path: object, needed: int | None = None, free: int | None = None) -> str:
    """'no space left on <path>: N MB needed, M MB free (free some space or move GPUPRICE_HOME)'."""
    parts = []
    if needed is not None:
        parts.append(f"{max(1, round(needed / MB))} MB needed")
    if free is not None:
        parts.append(f"{free // MB} MB free")
    detail = f": {', '.join(parts)}" if parts else ""
    return f"no space left on {path}{detail} (free some space or move GPUPRICE_HOME)"


def is_no_space(exc: BaseException) -> bool:
    """Whether an error is a full disk (an OSError ENOSPC/EDQUOT, or a database's own words)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc).lower()
    return "no space left on device" in text or "database or disk is full" in text
