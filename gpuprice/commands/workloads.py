"""gpuprice workloads: the workload catalog (built-in plus $GPUPRICE_WORKLOADS)."""

from __future__ import annotations

from typing import Annotated

import typer

from gpuprice.commands.output import write_json
from gpuprice.commands.tables import Column, WideFlag, print_table
from gpuprice.models.workloads import load_workloads

# Name, model and size always; the method, limits and description as the terminal allows.
COLUMNS = (
    Column("name", 0),
    Column("model", 0),
    Column("method", 1, wrap=True),
    Column("tokens", 0, numeric=True),
    Column("checkpoints", 3, numeric=True),
    Column("nodes", 4, numeric=True),
    Column("deadline", 2, numeric=True),
    Column("description", 5, wrap=True),
)


def _size(tokens: float) -> str:
    for unit, scale in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if tokens >= scale:
            return f"{tokens / scale:g}{unit}"
    return f"{tokens:g}"


def workloads(
    json_out: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
    wide: WideFlag = False,
) -> None:
    """List the workload catalog: names and definitions."""
    from gpuprice.settings import Settings

    catalog = load_workloads(Settings.from_env().workloads)
    if json_out:
        write_json([w.definition() for w in catalog])
        return
    rows = []
    for workload in catalog:
        definition = workload.definition()
        checkpoints = (
            str(definition["checkpoints"])
            if "checkpoints" in definition
            else f"every {workload.checkpoint_interval_hours:g} h"
        )
        nodes = "1" if workload.max_nodes == 1 else f"{workload.min_nodes}-{workload.max_nodes}"
        rows.append(
            [
                workload.name,
                workload.model or f"{workload.params_b:g}B",
                f"{workload.method} ({workload.optimizer}, {workload.precision})",
                _size(workload.training_tokens),
                checkpoints,
                nodes,
                f"{workload.deadline_hours:g} h" if workload.deadline_hours else "-",
                workload.description,
            ]
        )
    print_table(COLUMNS, rows, wide=wide)
