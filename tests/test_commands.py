"""The CLI's commands are module-level functions: the registry adds each to the app under its
command name, and tools and tests can call them directly with the same results as the CLI."""

from __future__ import annotations

import importlib
import json

import pytest

from gpuprice import commands
from gpuprice.errors import BadInput


def test_every_command_is_its_modules_function_registered_under_its_name() -> None:
    from gpuprice.cli import _register, app

    _register()
    registered = {info.name: info.callback for info in app.registered_commands}
    assert list(registered) == [name.replace("_", "-") for name in commands.COMMAND_MODULES]
    for name in commands.COMMAND_MODULES:
        function = getattr(importlib.import_module(f"gpuprice.commands.{name}"), name)
        assert registered[name.replace("_", "-")] is function
        assert not hasattr(importlib.import_module(f"gpuprice.commands.{name}"), "register")


def test_a_module_without_its_command_function_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    monkeypatch.setattr(commands, "COMMAND_MODULES", ("output",))  # a helper module, no output()
    with pytest.raises(
        commands.MissingCommand, match=r"gpuprice\.commands\.output defines no function output\(\)"
    ):
        commands.register_all(typer.Typer())


def test_plan_called_directly_prints_what_the_cli_prints(cli, capsys: pytest.CaptureFixture[str]) -> None:
    from gpuprice.commands.plan import plan

    through_cli = cli("plan", "--params-b", "8", "--json")
    assert through_cli.code == 0
    plan(params_b="8", json_out=True)
    assert json.loads(capsys.readouterr().out) == json.loads(through_cli.out)


def test_a_direct_call_raises_the_error_the_cli_turns_into_exit_2(cli) -> None:
    from gpuprice.commands.plan import plan

    with pytest.raises(BadInput, match="exactly one of --params-b N or --model ID"):
        plan()
    result = cli("plan")
    assert result.code == 2 and "exactly one of --params-b N or --model ID" in result.err


def test_workloads_called_directly_lists_the_catalog(home, cli, capsys: pytest.CaptureFixture[str]) -> None:
    from gpuprice.commands.workloads import workloads

    through_cli = cli("workloads", "--json")
    workloads(json_out=True)
    direct = json.loads(capsys.readouterr().out)
    assert direct == json.loads(through_cli.out)
    assert {"llama-3.1-70b-qlora", "llama-3.1-8b-qlora"} <= {w["name"] for w in direct}
