"""The one terminal table of the CLI: fitted to the terminal, numbers right-aligned and rounded.

Every command that prints a table (rank, workloads, sql, history, fit, plan) builds
:class:`Column` specs and text rows and calls :func:`print_table`:

- The table fits the terminal width (``COLUMNS``, else the size of the terminal on stdout,
  stderr or stdin, as Rich finds it; 100 when none is known, e.g. in CI). Columns are kept by
  priority (0 = always shown), text columns marked ``wrap`` wrap onto several lines, and a
  caption names the columns left out and the ``--wide`` flag that shows them all.
- Numbers are right-aligned; :func:`decimals_for` and :func:`number` give a column one sensible
  precision (``2.867``, never ``2.8666666666666667``).
- Every cell passes :func:`gpuprice.commands.output.terminal_safe` and is printed as plain
  text (never Rich markup), so a scraped name cannot style or move the terminal.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, TextIO

import typer

from gpuprice.commands.output import terminal_safe

FALLBACK_WIDTH = 100  # no terminal and no COLUMNS (a pipe, a CI log)
NARROWEST = 40  # below this no table is readable; narrower terminals scroll
GAP = 2  # characters between two columns (padding and separator)
WRAP_BUDGET = 14  # what a wrapping text column is counted as when choosing columns

WIDE_HELP = "Show every column at full width instead of fitting the table to the terminal."
WideFlag = Annotated[bool, typer.Option("--wide", help=WIDE_HELP)]


@dataclass(frozen=True)
class Column:
    header: str
    priority: int = 0  # 0: always shown; higher numbers are left out first on a narrow terminal
    numeric: bool = False  # right-aligned, never wrapped
    wrap: bool = False  # text that may wrap onto several lines


def terminal_width() -> int:
    """The width to fit, found as Rich finds it: ``COLUMNS``, else the size of whichever of stdout,
    stderr and stdin is a terminal (``gpuprice sql ... | less`` still fits the terminal), else
    :data:`FALLBACK_WIDTH`."""
    found = shutil.get_terminal_size((0, 0)).columns  # COLUMNS, else the terminal on stdout
    if found > 0:
        return max(NARROWEST, found)
    for stream in (sys.__stderr__, sys.__stdin__):
        try:
            return max(NARROWEST, os.get_terminal_size(stream.fileno()).columns)  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            continue
    return max(NARROWEST, FALLBACK_WIDTH)


def decimals_for(values: Iterable[object], *, significant: int = 4, most: int = 4) -> int:
    """Decimals that show every finite number of a column to ``significant`` digits (at most
    ``most`` decimals), without trailing zeros that no value needs."""
    needed = 0
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if isinstance(value, int) or not math.isfinite(value) or value == 0:
            continue
        digits = min(most, max(0, significant - 1 - math.floor(math.log10(abs(value)))))
        text = f"{value:.{digits}f}"
        if "." in text:
            digits = len(text.rstrip("0").split(".")[1])
        needed = max(needed, digits)
    return needed


def number(value: object, decimals: int = 2, *, thousands: bool = True) -> str:
    """``value`` with ``decimals`` decimals (and thousands separators); blank for missing values."""
    if value is None or isinstance(value, bool):
        return "" if value is None else str(value).lower()
    if isinstance(value, int):
        return f"{value:,}" if thousands else str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        text = f"{value:,.{decimals}f}" if thousands else f"{value:.{decimals}f}"
        return text[1:] if text.startswith("-") and not text.strip("-0.,") else text  # no "-0.00"
    return str(value)


def _natural(header: str, cells: Iterable[str]) -> int:
    return max([len(header)] + [max((len(line) for line in c.splitlines()), default=0) for c in cells])


def _longest_word(header: str, cells: Iterable[str]) -> int:
    return max([len(header)] + [len(word) for cell in cells for word in cell.split()])


def choose_columns(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int) -> list[int]:
    """Indexes (in table order) of the columns that fit ``width``, most important first, stopping at
    the first that does not fit (a narrow empty column never displaces a wider important one). A
    wrapping column counts as :data:`WRAP_BUDGET` characters, or its longest word (words are not split)."""
    natural = [_natural(c.header, (row[i] for row in rows)) for i, c in enumerate(columns)]
    budget = [
        min(n, max(WRAP_BUDGET, _longest_word(c.header, (row[i] for row in rows)))) if c.wrap else n
        for i, (c, n) in enumerate(zip(columns, natural, strict=True))
    ]
    order = sorted(range(len(columns)), key=lambda i: (columns[i].priority, i))
    chosen: list[int] = []
    used = 0
    full = False  # once a column does not fit, no less important one takes its place
    for i in order:
        cost = budget[i] + (GAP if chosen else 0)
        if columns[i].priority == 0 or (not full and used + cost <= width):
            chosen.append(i)
            used += cost
        elif columns[i].priority > 0:
            full = True
    return sorted(chosen)


def print_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    wide: bool = False,
    width: int | None = None,
    notes: Sequence[str] = (),
    stream: TextIO | None = None,
) -> None:
    """Print ``rows`` (text cells, one per column) as a table fitted to ``width`` (default: the
    terminal's) or, with ``wide``, every column at full width. ``notes`` print under the table."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    fit = terminal_width() if width is None else max(NARROWEST, width)
    safe_rows = [[terminal_safe(cell) for cell in row] for row in rows]
    keep = list(range(len(columns))) if wide else choose_columns(columns, safe_rows, fit)
    hidden = [columns[i].header for i in range(len(columns)) if i not in keep]
    if wide:
        natural = [_natural(c.header, (r[i] for r in safe_rows)) for i, c in enumerate(columns)]
        fit = max(fit, sum(natural) + GAP * max(0, len(columns) - 1))
    caption_lines = [f"not shown at {fit} columns (--wide shows every column): {', '.join(hidden)}"]
    caption = "\n".join(list(notes) + (caption_lines if hidden else []))
    table = Table(
        title=Text(terminal_safe(title)) if title else None,
        title_justify="left",
        caption=Text(caption) if caption else None,
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
        header_style="bold",
    )
    for i in keep:
        column = columns[i]
        table.add_column(
            Text(terminal_safe(column.header)),
            justify="right" if column.numeric else "left",
            no_wrap=not column.wrap,
            overflow="fold" if column.wrap else "ellipsis",
        )
    for row in safe_rows:
        table.add_row(*(Text(row[i]) for i in keep))
    console = Console(file=stream, width=fit, highlight=False, soft_wrap=False)
    console.print(table)
