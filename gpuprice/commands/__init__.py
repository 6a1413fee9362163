"""Command registry. Each module defines ``register(app)``; a missing module is skipped."""

from __future__ import annotations

import importlib

import typer

COMMAND_MODULES = (
    "run",
    "sql",
    "parse",
    "import_observations",
    "fit",
    "plan",
    "estimate",
    "workloads",
    "rank",
    "report",
)


def register_all(app: typer.Typer) -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"gpuprice.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"gpuprice.commands.{name}":
                continue
            raise
        module.register(app)
