"""The console script sizes the garbage collector for a batch process before any command runs."""

from __future__ import annotations

import gc

import pytest

import gpuprice.cli as cli
from gpuprice.gc_tuning import BATCH_PROCESS_THRESHOLDS


def test_console_script_runs_commands_with_batch_thresholds(monkeypatch: pytest.MonkeyPatch):
    seen: list[tuple[int, ...]] = []
    exits: list[int] = []

    class Exited(Exception):
        pass

    def exit_now(code: int) -> None:
        exits.append(code)
        raise Exited

    monkeypatch.setattr(cli, "main", lambda: seen.append(gc.get_threshold()) or 0)
    monkeypatch.setattr(cli.atexit, "_run_exitfuncs", lambda: None)
    monkeypatch.setattr(cli.os, "_exit", exit_now)
    before = gc.get_threshold()
    try:
        with pytest.raises(Exited):
            cli.console_main()
    finally:
        gc.set_threshold(*before)
    assert seen == [BATCH_PROCESS_THRESHOLDS] and exits == [0]


def test_batch_thresholds_still_collect_young_cycles():
    # A young generation larger than the default, not a collector switched off.
    young, middle, old = BATCH_PROCESS_THRESHOLDS
    assert 700 < young <= 1_000_000 and middle >= 1 and old >= 1


@pytest.mark.slow
def test_processes_that_load_the_code_location_or_draw_charts_are_tuned_too():
    # A run worker (UI, daemon, `dagster job execute`) and the chart helper start as fresh
    # interpreters: nothing of the console script's tuning reaches them.
    import subprocess
    import sys

    for code in (
        "import gc; import gpuprice.pipelines.definitions; print(gc.get_threshold(), gc.get_freeze_count() > 0)",
        "import gc, io, sys; from gpuprice.reports import chart_helper; real = chart_helper.serve;"
        " chart_helper.serve = lambda requests, replies: (real(io.BytesIO(), io.BytesIO()),"  # no jobs
        " print(gc.get_threshold(), gc.get_freeze_count() > 0, file=sys.stderr)); chart_helper.main()",
    ):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        # Batch thresholds, and the loaded code frozen (no scan of it again, nor at exit).
        assert f"{BATCH_PROCESS_THRESHOLDS} True" in done.stdout + done.stderr, done.stdout + done.stderr


def test_rendering_freezes_the_heap_and_never_thaws_a_lifetime_freeze():
    from gpuprice.reports.render import _long_lived_heap_frozen

    before = gc.get_freeze_count()
    with _long_lived_heap_frozen():
        assert gc.get_freeze_count() >= max(before, 1)
    if before:  # the code location froze its loaded code: thawing would undo that
        assert gc.get_freeze_count() >= before
    else:
        assert gc.get_freeze_count() == 0
