"""User-typed quantities (command line, CSV cells, workload YAML): one parser, one error wording."""

from __future__ import annotations

import math

from gpuprice.errors import BadInput

# Token counts and other quantities: "1e9", "1_000_000", "1,000,000", "500M", "2B", "1.5T".
QUANTITY_SUFFIXES: dict[str, float] = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}


def parse_number(option: str, text: str | None, *, suffixes: bool = False) -> float | None:
    """A number from the command line, a CSV cell or a YAML field; ``suffixes`` accepts K/M/B/T.

    The one parser of user-typed quantities (``--tokens 500M`` and ``tokens: 500M`` agree)."""
    if text is None:
        return None
    cleaned = text.strip().replace("_", "").replace(",", "")
    scale = 1.0
    if suffixes and cleaned[-1:].lower() in QUANTITY_SUFFIXES:
        scale, cleaned = QUANTITY_SUFFIXES[cleaned[-1].lower()], cleaned[:-1]
    try:
        value = float(cleaned) * scale
    except ValueError:
        hint = " (suffixes K, M, B, T accepted)" if suffixes else ""
        raise BadInput(f"{option} {text!r} is not a number{hint}") from None
    if not math.isfinite(value):
        raise BadInput(f"{option} {text!r} is not a finite number")
    return value


def tokens_text(value: float) -> str:
    """A token count as written with the suffixes parse_number accepts: 200M, 1.5B, 100B."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= scale:
            return f"{value / scale:.4g}{suffix}"
    return f"{value:g}"
