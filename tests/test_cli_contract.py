"""The command line's own contract: help, version, and what --help says about each value."""

from __future__ import annotations

import re


def test_no_arguments_prints_the_usual_help(cli) -> None:
    result = cli()
    assert result.code == 0, result.err
    assert result.out.startswith("Usage: gpuprice [OPTIONS] COMMAND")
    for command in ("run", "sql", "parse", "fit", "estimate", "rank", "report", "workloads", "plan"):
        assert re.search(rf"^\s+{command}\s", result.out, re.M), command
    assert result.err == ""


def test_version(cli) -> None:
    from importlib import metadata

    result = cli("--version")
    assert result.code == 0 and result.out == f"gpuprice {metadata.version('gpuprice')}\n"


def test_every_value_says_its_type_or_choices(cli) -> None:
    commands = re.findall(r"^  ([a-z][a-z-]+)\s", cli().out.split("Commands:")[1], re.M)
    assert len(commands) >= 10
    for name in commands:
        result = cli(name, "--help")
        assert result.code == 0, (name, result.err)
        # Typer's own rendering of a text value is "<str>"; every value names its type instead.
        assert not re.search(r"<\w+>", result.out), (name, result.out)
    fit = cli("fit", "--help").out
    for expected in ("--seq-len INTEGER", "--params-b FLOAT", "--config PATH", "--method [full|lora|qlora]"):
        assert expected in fit, expected
    assert "--sharding [none|zero2|zero3|fsdp]" in fit
    assert "--format [table|json|csv]" in cli("rank", "--help").out
    assert "--source [live|archive]" in cli("run", "--help").out


def test_tables_offer_wide(cli) -> None:
    """Every command printing a wide table fits it to the terminal and offers --wide (a flag)."""
    for command in ("rank", "workloads", "sql", "history"):
        help_text = cli(command, "--help").out
        assert re.search(r"--wide\s+Show every column", help_text), command
