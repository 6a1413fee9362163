"""What ``--help`` shows for an option's value: its type or its choices, as Click spells them.

Values arrive as text and are parsed by the commands themselves (so a bad value is a one-line
error naming the option and the valid values), so Typer sees ``str`` everywhere; these
metavars say what the text must be.
"""

from __future__ import annotations

from collections.abc import Iterable

INTEGER = "INTEGER"
FLOAT = "FLOAT"
PATH = "PATH"
TEXT = "TEXT"
DATE = "YYYY-MM-DD"
WEEK = "YYYY-Www"
TOKENS = "FLOAT[K|M|B|T]"  # a count with an optional suffix, as in the workload YAML


def choice(values: Iterable[str]) -> str:
    """``[a|b|c]``: the choice list Click prints for a Choice option."""
    return "[" + "|".join(values) + "]"
