"""One seeded warehouse per test session: every provider replayed for the two days before today.

Seeding costs two whole runs; the provider-fault and process-fault modules both start from it
(each test copies it), so it is built once per session and memoised here.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from faults.runs import environment, gpuprice
from gpuprice.scrapers.offer import PROVIDERS

TODAY = dt.datetime.now(dt.UTC).date()  # live runs only accept today
SEED_DAYS = (TODAY - dt.timedelta(days=2), TODAY - dt.timedelta(days=1))

_seeded: dict[int, Path] = {}


def seeded_home(factory: pytest.TempPathFactory) -> Path:
    """GPUPRICE_HOME holding every provider's snapshot of SEED_DAYS (sample archive). Copy before use."""
    key = id(factory)  # one per session (the factory is session-scoped)
    if key not in _seeded:
        home = factory.mktemp("seeded") / "home"
        for day in SEED_DAYS:
            with environment({"GPUPRICE_HOME": str(home), "GPUPRICE_ARCHIVE": None}):
                result = gpuprice("run", "--date", day.isoformat(), "--source", "archive", "--no-reports")
            lines = result.provider_lines()
            assert sorted(lines) == sorted(PROVIDERS), result
            assert all(" ok " in line for line in lines.values()), result.out
        _seeded[key] = home
    return _seeded[key]
