"""Command registry: command ``check-live`` is the function ``check_live`` of ``gpuprice.commands.check_live``.

Each command is a module-level function in its own module (named as the command, ``-`` as ``_``),
so tools and tests can import and call it directly; ``register_all`` adds them to the Typer app in
this order. Every command of the contract is listed; a module that is missing or lacks its
function is an error at start-up (a broken install), never a silently absent command.
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
        command = getattr(module, name, None)
        if not callable(command):
            raise MissingCommand(f"gpuprice.commands.{name} defines no function {name}()")
        app.command(name.replace("_", "-"))(command)
