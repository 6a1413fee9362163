"""README.md's command blocks run against the sample archive, and the output it shows is real.

Every fenced block that holds commands (``bash``/``sh``/``console``, or any line starting with
``$ ``) carries a marker comment on the line before it:

- ``<!-- readme-test: run -->``: each command line (``gpuprice ...``, ``.venv/bin/gpuprice ...``,
  a trailing ``# comment`` allowed) runs in a home where `gpuprice run --date 2026-10-06` replayed
  the bundled sample archive, and exits 0;
- ``<!-- readme-test: output -->``: ``$ command`` lines (continued while a quote is open) are run
  and the lines under each are its stdout, verbatim (trailing spaces aside);
- ``<!-- readme-test: abbreviated -->``: as ``output``, but the shown lines need only appear in the
  real output, in order (``...`` lines stand for what is left out);
- ``<!-- readme-test: skip: REASON -->``: not runnable here (``make``, a server, the network), with
  the reason (the test that covers it, when one does).

A new command block without a marker fails the test: the README cannot drift silently.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
SAMPLE_DATE = "2026-10-06"
MARKER = re.compile(r"<!--\s*readme-test:\s*(run|output|abbreviated|skip)\s*(?::\s*(.*?))?\s*-->")
COMMAND_LANGUAGES = {"bash", "sh", "shell", "console"}
GPUPRICE = re.compile(r"^(?:\.venv/bin/)?gpuprice\s")


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the opening fence
    language: str
    lines: list[str]
    mark: str | None
    reason: str | None

    @property
    def has_commands(self) -> bool:
        return self.language in COMMAND_LANGUAGES or any(line.startswith("$ ") for line in self.lines)


def blocks(text: str) -> list[Block]:
    found: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\S*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.search(before)
        found.append(
            Block(
                line=i + 1,
                language=fence.group(1).lower(),
                lines=lines[i + 1 : end],
                mark=marker.group(1) if marker else None,
                reason=marker.group(2) if marker else None,
            )
        )
        i = end + 1
    return found


def _argv(command: str) -> list[str]:
    words = shlex.split(command, comments=True)
    assert words and GPUPRICE.match(command), f"not a gpuprice command: {command!r}"
    return words[1:]


def transcript(block: Block) -> list[tuple[str, list[str]]]:
    """(command, shown output lines) pairs of a ``$ command`` block."""
    pairs: list[tuple[str, list[str]]] = []
    lines = list(block.lines)
    while lines:
        line = lines.pop(0)
        assert line.startswith("$ "), f"README line {block.line}: output before any command: {line!r}"
        command = line[2:]
        while True:  # a quoted query may span lines
            try:
                shlex.split(command)
                break
            except ValueError:
                command += "\n" + lines.pop(0)
        shown = []
        while lines and not lines[0].startswith("$ "):
            shown.append(lines.pop(0).rstrip())
        pairs.append((command, shown))
    return pairs


def test_every_command_block_is_marked() -> None:
    unmarked = [
        b.line for b in blocks(README.read_text(encoding="utf-8")) if b.has_commands and b.mark is None
    ]
    assert unmarked == [], f"README command blocks without a readme-test marker at lines {unmarked}"
    for block in blocks(README.read_text(encoding="utf-8")):
        if block.mark == "skip":
            assert block.reason, f"README line {block.line}: a skipped block says why"


@pytest.fixture(scope="module")
def sample_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("readme") / "home"


@pytest.mark.slow
def test_readme_blocks_run_and_show_real_output(
    sample_home: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUPRICE_HOME", str(sample_home))
    monkeypatch.delenv("GPUPRICE_WORKLOADS", raising=False)
    monkeypatch.setenv("COLUMNS", "120")
    ran = cli("run", "--source", "archive", "--date", SAMPLE_DATE, "--no-reports")
    assert ran.code == 0, ran.err
    checked = 0
    for block in blocks(README.read_text(encoding="utf-8")):
        if block.mark == "run":
            for line in block.lines:
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                res = cli(*_argv(line))
                assert res.code == 0, (f"README line {block.line}: {line}", res.err)
                checked += 1
        elif block.mark in ("output", "abbreviated"):
            for command, shown in transcript(block):
                res = cli(*_argv(command))
                assert res.code == 0, (f"README line {block.line}: {command}", res.err)
                real = [line.rstrip() for line in res.out.splitlines()]
                if block.mark == "output":
                    assert shown == real, (
                        f"README line {block.line}: {command}\nREADME shows:\n"
                        + "\n".join(shown)
                        + "\nreal output:\n"
                        + "\n".join(real)
                    )
                else:
                    position = 0
                    for expected in (s for s in shown if s.strip() not in ("", "...")):
                        assert expected in real[position:], (f"README line {block.line}", expected, real)
                        position = real.index(expected, position) + 1
                checked += 1
    assert checked >= 8  # the examples of the quickstart, ranking, backfills and analyst queries
