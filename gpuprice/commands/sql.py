"""gpuprice sql: read-only queries against the published analytics copy."""

from __future__ import annotations

import contextlib
import io
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Annotated, Any

import typer

from gpuprice.commands import metavars
from gpuprice.commands.tables import WideFlag
from gpuprice.errors import BadInput

FORMATS = ("table", "csv", "json")


def sql(
    query: Annotated[
        str,
        typer.Argument(
            help="One SQL statement (SELECT or EXPLAIN) against the analytics copy; several are refused.",
            metavar="QUERY",
        ),
    ],
    format: Annotated[
        str, typer.Option("--format", help="Output format [table].", metavar=metavars.choice(FORMATS))
    ] = "table",
    wide: WideFlag = False,
) -> None:
    """Run one read-only statement against the published analytics copy ($GPUPRICE_HOME/analytics.duckdb).

    Exactly one statement: a query of several (`select 1; select 2`) is refused with a one-line
    error (exit 2), never partly run.
    """
    from gpuprice.commands.output import write_csv, write_json
    from gpuprice.settings import Settings
    from gpuprice.warehouse.sqlguard import open_guarded, run_query

    if format not in FORMATS:
        raise BadInput(f"unknown format {format!r}; valid: {', '.join(FORMATS)}")
    settings = Settings.from_env()
    settings.checked_home()
    path = settings.analytics_path
    if not path.exists():
        raise BadInput(f"no published warehouse at {path}; run `gpuprice run` first")
    con = open_guarded(path, settings.exports_dir)
    try:
        result = run_query(
            con,
            query,
            timeout_s=settings.sql_timeout_s,
            row_cap=settings.sql_max_rows,
            byte_cap=settings.sql_max_bytes,
        )
    finally:
        con.close()
    columns, rows = result.columns, result.rows
    with output_deadline(result.deadline, settings.sql_timeout_s):
        text = io.StringIO()
        if format == "json":
            write_json([dict(zip(columns, row)) for row in rows], stream=text)
        elif format == "csv":
            write_csv(columns, rows, stream=text)
        else:
            print_result(columns, rows, wide=wide, stream=text)
        write_by_deadline(text.getvalue(), result.deadline, settings.sql_timeout_s)


def _timed_out(limit_s: float) -> BadInput:
    return BadInput(
        f"the query was stopped after {limit_s:g} s, the time limit of gpuprice sql (output included); "
        "narrow it or raise GPUPRICE_SQL_TIMEOUT"
    )


@contextlib.contextmanager
def output_deadline(deadline: float, limit_s: float) -> Iterator[None]:
    """Stop the block with the time-limit error at ``deadline`` (``time.monotonic``), even inside
    a write to a pipe nobody reads: a SIGALRM in the main thread (elsewhere, chunk checks only)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise _timed_out(limit_s)

    def expire(signum: int, frame: Any) -> None:
        raise _timed_out(limit_s)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, remaining)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def write_by_deadline(text: str, deadline: float, limit_s: float, chunk: int = 1 << 16) -> None:
    """``text`` to stdout in chunks, the time limit checked before each."""
    for start in range(0, len(text), chunk):
        if time.monotonic() > deadline:
            raise _timed_out(limit_s)
        sys.stdout.write(text[start : start + chunk])
    sys.stdout.flush()


# Result columns whose name says they are the answer (a price, a value, a total, a cost) and
# columns that name a row (which offer, which workload).
KEY_NAMES = ("usd_per_gpu_hour", "value", "total", "cost", "price", "warnings")
NAME_COLUMNS = frozenset({"provider", "gpu", "tier", "workload", "metric", "rank"})
FIRST_TEXT = 4  # text columns among the first four name the row too


def _priority(index: int, name: str, numeric: bool, filled: bool) -> int:
    """Which columns a narrow terminal keeps (0 always; higher numbers are left out first): the
    first column, the answer's columns (price, value, total, cost), the columns that name the
    row, the other numbers, the other text; an empty column goes first."""
    lowered = name.lower()
    if index == 0:
        return 0
    if not filled:
        return 9
    if lowered in ("value", "usd_per_gpu_hour", "warnings") or any(
        lowered.endswith(k) or lowered.startswith(k) for k in KEY_NAMES
    ):
        return 1
    if lowered in NAME_COLUMNS or (not numeric and index < FIRST_TEXT):
        return 2
    return 3 if numeric else 4


def print_result(columns: list[str], rows: list[tuple], *, wide: bool = False, stream: Any = None) -> None:
    """A query result as a terminal table: the first columns that fit (or every one with
    ``wide``), numbers right-aligned to one precision per column, NULL as blank."""
    from gpuprice.commands.output import jsonable
    from gpuprice.commands.tables import Column, decimals_for, number, print_table

    values = [[jsonable(v) for v in row] for row in rows]
    specs, formats = [], []
    for i, name in enumerate(columns):
        column = [row[i] for row in values if row[i] not in (None, "")]
        numeric = bool(column) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in column
        )
        decimals = decimals_for(column) if numeric else 0
        specs.append(
            Column(
                str(name),
                priority=_priority(i, str(name), numeric, bool(column)),
                numeric=numeric,
                wrap=not numeric,
            )
        )
        formats.append(decimals)
    cells = [
        [
            "" if v is None else number(v, formats[i], thousands=False) if specs[i].numeric else str(v)
            for i, v in enumerate(row)
        ]
        for row in values
    ]
    print_table(specs, cells, wide=wide, stream=stream)
