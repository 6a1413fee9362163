"""Progress of a long command (run, report) on stderr: a Rich bar on a terminal, plain lines in a log.

``backfill`` draws its own bar over dates; these commands have a few named stages plus the
per-step events that :mod:`gpuprice.pipelines.progress` reports, so one bar counts both.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from rich.console import Console


@contextlib.contextmanager
def stage_bar(
    label: str, total: float, console: Console, *, log_lines: bool = True
) -> Iterator[tuple[Callable[[str], None], Callable[[float], None]]]:
    """``(say, advance)``: ``say(message)`` names the current stage, ``advance(n)`` moves the bar
    ``n`` steps of ``total``. Off a terminal no bar is drawn; each stage is one dim line when
    ``log_lines`` (a command whose errors must stay one line on stderr says False)."""
    if not console.is_terminal:

        def say_line(message: str) -> None:
            if log_lines:
                console.print(f"[dim]{message}[/dim]", markup=True, highlight=False)

        yield say_line, lambda n: None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    task = bar.add_task(label, total=total)

    def say(message: str) -> None:
        bar.update(task, description=f"{label}: {message}")

    def advance(steps: float) -> None:
        bar.advance(task, steps)

    with bar:
        yield say, advance
        bar.update(task, completed=total, description=f"{label}: done")
