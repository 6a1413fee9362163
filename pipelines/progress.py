"""Progress of a backfill's steps, for a bar on the terminal (no-op in the Dagster UI).

Assets run in the CLI's process, so a step can report "n more dates done in stage X" to a
listener the command installed; under the Dagster daemon nobody listens.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

Listener = Callable[[str, int], None]
_listeners: list[Listener] = []


def advance(stage: str, dates: int = 1) -> None:
    """``dates`` more dates finished ``stage`` (e.g. ``parse/nebius``, ``rankings``)."""
    for listener in _listeners:
        listener(stage, dates)


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)
