"""Command registry: each module named here defines ``register(app)``.

Every command of the contract is listed; a module that is missing or has no ``register`` is an
error at start-up (a broken install), never a silently absent command.
"""

from __future__ import annotations

import importlib

import typer

COMMAND_MODULES = (
    "run",
    "backfill",
    "sql",
    "parse",
    "import_observations",
    "import_history",
    "fit",
    "plan",
    "estimate",
    "workloads",
    "rank",
    "report",
    "check_live",
    "history",
)


class MissingCommand(RuntimeError):
    """A command module of the registry cannot be loaded."""


def register_all(app: typer.Typer) -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"gpuprice.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"gpuprice.commands.{name}":
                raise MissingCommand(f"command module gpuprice.commands.{name} is missing") from None
            raise
        register = getattr(module, "register", None)
        if not callable(register):
            raise MissingCommand(f"gpuprice.commands.{name} defines no register(app)")
        register(app)
