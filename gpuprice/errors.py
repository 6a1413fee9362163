"""Errors a user can act on: the CLI prints them as one line, never a traceback."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class BadInput(ValueError):
    """Bad user input: exit code 2, one line naming the bad value and the valid choices."""

    exit_code = 2


class StructureError(RuntimeError):
    """A page without a recognisable price structure: exit code 3."""

    exit_code = 3


def unknown_choice(kind: str, value: str, choices: Iterable[str], *, limit: int = 12) -> BadInput:
    """A BadInput for an unknown name, listing close matches (or the valid choices)."""
    options = sorted(set(choices))
    close = difflib.get_close_matches(value, options, n=5, cutoff=0.5)
    if close:
        hint = "did you mean " + ", ".join(close) + "?"
    else:
        shown = ", ".join(options[:limit]) + (", ..." if len(options) > limit else "")
        hint = f"valid: {shown}"
    return BadInput(f"unknown {kind} {value!r}; {hint}")


def read_text_input(path, kind: str, *, encoding: str = "utf-8") -> str:
    """A user-named text file's content; a missing or unreadable file is one BadInput line.

    ``kind`` names the file in the message ("config", "batch", "workloads").
    """
    try:
        return path.read_text(encoding=encoding)
    except FileNotFoundError:
        raise BadInput(f"{kind} file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {kind} file {path}: {exc}") from None
