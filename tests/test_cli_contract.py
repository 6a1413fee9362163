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


def _contract_fit_options() -> list[tuple[str, list[str]]]:
    """(option, listed values) from the contract's `gpuprice fit` table (tests/data/CONTRACT.md);
    values are listed only for options whose cell is a comma list of plain words."""
    from tests.conftest import TEST_DATA

    text = (TEST_DATA / "CONTRACT.md").read_text()
    section = text.split("## gpuprice fit", 1)[1].split("\n## ", 1)[0]
    options: list[tuple[str, list[str]]] = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not re.fullmatch(r"--[a-z][a-z-]*( .*)?", cells[0]):
            continue
        option = cells[0].split()[0]
        words = [w.strip() for w in cells[1].split(",")]
        values = words if len(words) > 1 and all(re.fullmatch(r"[a-z0-9_-]+", w) for w in words) else []
        options.append((option, values))
    return options


def test_fit_and_estimate_accept_every_option_and_value_of_the_contract(cli) -> None:
    """Acceptance checks use the contract's option names and values: each is in `--help` of fit
    and estimate (estimate takes fit's model options), every listed value among its choices."""
    options = _contract_fit_options()
    assert len(options) >= 18  # the table as read from the file
    assert ("--attention", ["flash", "sdpa", "eager"]) in options
    for command in ("fit", "estimate"):
        help_text = re.sub(r"\s+", " ", cli(command, "--help").out)
        for option, values in options:
            if command == "estimate" and option in ("--margin", "--memory-metric"):
                continue  # fit's verdict options
            assert option in help_text, (command, option)
            if values:
                listed = re.search(re.escape(option) + r"(?: -\S+)? \[([a-z0-9_|-]+)\]", help_text)
                assert listed, (command, option)
                assert set(values) <= set(listed.group(1).split("|")), (command, option, values)
