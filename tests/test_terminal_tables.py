"""gpuprice.commands.tables: columns chosen by priority to fit, numbers rounded and right-aligned."""

from __future__ import annotations

import io

import pytest

from gpuprice.commands.tables import Column, choose_columns, decimals_for, number, print_table

COLUMNS = (
    Column("name", 0),
    Column("price", 0, numeric=True),
    Column("notes", 2, wrap=True),
    Column("detail", 1),
)
ROWS = [
    ["alpha", "2.87", "a long note that may wrap onto several lines", "x" * 30],
    ["beta", "12.50", "short", "y" * 30],
]


def _render(width: int, **kwargs) -> str:
    stream = io.StringIO()
    print_table(COLUMNS, ROWS, width=width, stream=stream, **kwargs)
    return stream.getvalue()


@pytest.mark.parametrize(
    ("values", "decimals"),
    [([2.8666666666666667], 3), ([2.69, 12.5], 2), ([1234.5678], 0), ([0.0012345], 4), ([3, 4], 0), ([], 0)],
)
def test_decimals_for_a_column(values, decimals) -> None:
    assert decimals_for(values) == decimals


def test_number_forms() -> None:
    assert number(2.8666666666666667, 3) == "2.867"
    assert number(13214.03, 2) == "13,214.03"
    assert number(-0.0001, 2) == "0.00"  # never "-0.00"
    assert number(None) == "" and number(float("nan")) == ""
    assert number(2026, thousands=False) == "2026"


def test_columns_kept_by_priority() -> None:
    assert choose_columns(COLUMNS, ROWS, 200) == [0, 1, 2, 3]
    assert choose_columns(COLUMNS, ROWS, 50) == [0, 1, 3]  # detail (1) before notes (2)
    assert choose_columns(COLUMNS, ROWS, 10) == [0, 1]  # priority 0 always


@pytest.mark.parametrize("width", [40, 60, 100])
def test_table_fits_and_names_what_it_left_out(width: int) -> None:
    text = _render(width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert ("not shown" in text) == (width < 60)
    wide = _render(40, wide=True)
    assert "x" * 30 in wide and "not shown" not in wide


def test_numbers_right_aligned_and_text_not_markup() -> None:
    stream = io.StringIO()
    print_table(
        [Column("who"), Column("usd", numeric=True)],
        [["[bold]x[/bold]\x1b[2J", "2.87"], ["b", "12.50"]],
        width=60,
        stream=stream,
    )
    lines = stream.getvalue().splitlines()
    assert "[bold]x[/bold]\\x1b[2J" in lines[2]  # shown as text, escape neutralised
    assert lines[2].endswith("2.87") and lines[3].endswith("12.50")
    assert lines[0].rstrip().endswith("usd")


def test_width_is_found_as_rich_finds_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """COLUMNS first; else whichever of stdout, stderr, stdin is a terminal (a pipe on stdout
    still fits the terminal on stderr); else 100."""
    import os
    import sys

    from gpuprice.commands import tables

    sizes = {sys.__stderr__.fileno(): 132}

    def size(fd: int = 1) -> os.terminal_size:
        if fd in sizes:
            return os.terminal_size((sizes[fd], 40))
        raise OSError("not a terminal")

    monkeypatch.setattr(os, "get_terminal_size", size)  # shutil asks os for stdout's size
    monkeypatch.delenv("COLUMNS", raising=False)
    assert tables.terminal_width() == 132
    sizes.clear()
    assert tables.terminal_width() == tables.FALLBACK_WIDTH
    monkeypatch.setenv("COLUMNS", "77")
    assert tables.terminal_width() == 77


def test_sql_keeps_the_answer_and_drops_empty_columns_first() -> None:
    from gpuprice.commands.sql import print_result

    columns = [
        "snapshot_date",
        "gpu",
        "tier",
        "provider",
        "sku",
        "gpu_raw",
        "gpu_count",
        "community",
        "commitment_months",
        "region",
        "price_basis",
        "usd_per_gpu_hour",
        "source",
        "observed_on",
        "age_days",
    ]
    rows = [
        (
            "2026-10-06",
            "h100-sxm",
            "on_demand",
            "runpod",
            "NVIDIA H100 80GB HBM3",
            "H100 SXM",
            1,
            True,
            None,
            None,
            "list",
            2.69,
            "archive",
            "2026-10-06",
            0,
        ),
    ]
    for width in (80, 100, 120):
        out = io.StringIO()
        monkeypatch_width = {"COLUMNS": str(width)}
        with pytest.MonkeyPatch.context() as mp:
            for k, v in monkeypatch_width.items():
                mp.setenv(k, v)
            print_result(columns, rows, stream=out)
        header = out.getvalue().splitlines()[0].split()
        assert {"usd_per_gpu_hour", "provider", "gpu"} <= set(header), (width, header)
        if len(header) < len(columns) - 2:  # something non-empty left out: the empty ones went first
            assert "region" not in header and "commitment_months" not in header
