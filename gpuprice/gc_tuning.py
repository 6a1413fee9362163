"""The cyclic garbage collector's thresholds for a gpuprice process (a batch job, not a server).

CPython 3.11 collects the youngest generation every 700 net allocations of container objects
and runs a full collection whenever the objects that survived earlier collections have grown by
a quarter. A pipeline run imports ~2,000 modules (Dagster, SQLAlchemy, pandas, DuckDB) and
builds ~300,000 objects that live until the process exits, so the collector kept re-scanning
them: measured on the daily run (2026-12-04, `gc.callbacks`), 628 young, 57 middle and 5 full
collections took 0.55 s of a ~4.5 s `gpuprice run --no-reports`, the full ones 0.41 s. With a
young generation of 100,000 objects the same run does 4 young collections (0.10-0.15 s) and no
full one; wall time fell by 0.7-0.8 s (median of 8 runs each, interleaved) and peak RSS rose by
~10 MB (320 -> 330 MB).

Garbage is still collected: a young collection every 100,000 allocations, and a long process (a
five-year backfill) still reaches middle and full collections. Set where a gpuprice process
starts: the console script, the reports' chart helper process, and the Dagster code location
(pipelines/definitions.py), which the run workers of the UI, the daemon and ``dagster job
execute`` load before running assets.
Domain code never touches the collector.

Those processes also freeze the heap once their code is loaded (``freeze_loaded_code``): the
modules, classes and definitions stay until the process exits, so the collector need not scan
them again, and neither does the interpreter's final collections at exit. A `dagster job
execute` process that had loaded the code location spent ~0.65 s tearing down after its run
ended; frozen, 0.06 s (measured 2026-12-04).
"""

from __future__ import annotations

import gc

# (young, middle, old): collect the young generation every 100,000 net container allocations;
# the middle one every 50 young collections; the old one every 10 middle ones (and only when the
# long-lived objects grew by a quarter, CPython's own rule).
BATCH_PROCESS_THRESHOLDS = (100_000, 50, 10)


def tune_for_batch_process() -> None:
    """Give the collector thresholds sized for a process that builds a large, long-lived heap."""
    gc.set_threshold(*BATCH_PROCESS_THRESHOLDS)


def freeze_loaded_code() -> None:
    """Move every object alive now (the imported code, the loaded definitions) to the permanent
    generation: never scanned again, by later collections or at exit. Objects made afterwards
    (a run's data) are collected as usual."""
    gc.freeze()
