"""The one orchestration (pipelines/orchestration.py): bad input is one line naming what to fix."""

from __future__ import annotations

import datetime as dt
import sys

import pytest

from gpuprice.errors import BadInput
from gpuprice.pipelines import orchestration
from gpuprice.pipelines.partitions import FIRST_DAY, check_in_range, daily_partitions


def test_the_partitions_start_where_the_data_starts() -> None:
    assert dt.date(2025, 5, 1) == FIRST_DAY
    assert daily_partitions.get_first_partition_key() == "2025-05-01"


@pytest.mark.parametrize(
    ("first", "last", "fragment"),
    [
        (
            dt.date(2025, 4, 30),
            dt.date(2025, 5, 2),
            "--from 2025-04-30 is before the first snapshot date 2025-05-01",
        ),
        (dt.date(2025, 5, 1), dt.date(2999, 1, 1), "--from 2999-01-01 is in the future"),
    ],
)
def test_a_partition_outside_the_range_is_one_line(first: dt.date, last: dt.date, fragment: str) -> None:
    with pytest.raises(BadInput) as raised:
        check_in_range(first, last, "--from")
    message = str(raised.value)
    assert fragment in message and "valid: 2025-05-01 to " in message and "\n" not in message


def test_a_code_location_that_fails_to_load_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gpuprice.pipelines.definitions", None)  # its import fails
    with pytest.raises(BadInput) as raised:
        orchestration.load_code_location()
    message = str(raised.value)
    assert message.startswith("the Dagster code location gpuprice.pipelines.definitions failed to load:")
    assert "ModuleNotFoundError" in message and "\n" not in message


PRIVATE = "dagster" + "._"  # spelled apart, so that a grep for it finds no file of the project


def test_nothing_imports_a_private_dagster_module() -> None:
    """Dagster's private modules (its underscore packages) change in any release: none is used."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    folders = ["gpuprice", "scrapers", "models", "warehouse", "reports", "pipelines", "bench", "tests"]
    offenders = [
        f"{path.relative_to(root)}:{number}"
        for folder in folders
        for path in (root / folder).rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PRIVATE in line
    ]
    assert offenders == []
