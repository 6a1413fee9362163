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


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the errors behind it (``raise ... from``, or raised while handling)."""
    seen: list[BaseException] = []
    item: BaseException | None = exc
    while item is not None and len(seen) < 32 and all(item is not s for s in seen):
        seen.append(item)
        item = item.__cause__ or item.__context__
    return seen


# What SQLite (Dagster's run and event storage), DuckDB and the OS say when a write fails: on a
# full disk SQLite often says only "disk I/O error"; free space then tells which it was.
_WRITE_FAILURE_WORDS = ("disk i/o error", "could not write", "failed to write", "i/o error")


def full_disk_message(exc: BaseException, home: Path) -> str | None:
    """The one line for an error that a full disk caused, or None: an error (or one behind it)
    in full-disk words (:func:`is_no_space`), or a failed write while the filesystem of ``home``
    has less free space than a run needs (:func:`space_needed`)."""
    chain = _chain(exc)
    for item in chain:
        if is_no_space(item):
            where = item.filename if isinstance(item, OSError) and item.filename else home
            return no_space_message(where, _needed_or_none(home), _free_or_none(home))
    wrote = any(isinstance(item, OSError) or is_failed_write(str(item)) for item in chain)
    return _low_space_message(home) if wrote else None


def full_disk_text_message(text: str, home: Path) -> str | None:
    """The full-disk line for a failed pipeline step known only by its error text: a failed write
    (full-disk words or not) while ``home``'s filesystem has less free space than a run needs.
    With the space there now, the step's own error stands (a provider's FAILED line, exit 1)."""
    lowered = text.lower()
    said_full = "no space left on device" in lowered or "database or disk is full" in lowered
    return _low_space_message(home) if said_full or is_failed_write(text) else None


def is_failed_write(text: str) -> bool:
    """Whether an error's text says a write failed (full disk or not: see the free space)."""
    lowered = text.lower()
    return any(w in lowered for w in _WRITE_FAILURE_WORDS) or "errno 28" in lowered


def _free_or_none(home: Path) -> int | None:
    try:
        return free_bytes(home)
    except OSError:
        return None


def _needed_or_none(home: Path) -> int | None:
    try:
        return space_needed(home)
    except OSError:
        return None


def _low_space_message(home: Path) -> str | None:
    """The full-disk line when ``home``'s filesystem has less free space than a run needs."""
    free, needed = _free_or_none(home), _needed_or_none(home)
    if free is not None and free < (needed or BASE_NEED_BYTES):
        return no_space_message(home, needed, free)
    return None


def is_no_space(exc: BaseException) -> bool:
    """Whether an error is a full disk (an OSError ENOSPC/EDQUOT, or a database's own words)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc).lower()
    return "no space left on device" in text or "database or disk is full" in text
