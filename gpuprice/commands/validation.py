"""Validation of user input shared by commands: one-line BadInput errors."""

from __future__ import annotations

import datetime as dt

from gpuprice.errors import BadInput, unknown_choice
from gpuprice.scrapers.offer import PROVIDERS


def parse_date(value: str, option: str = "date") -> dt.date:
    try:
        return dt.date.fromisoformat(value.strip())
    except (ValueError, AttributeError):
        raise BadInput(f"bad {option} {value!r}; expected a date as YYYY-MM-DD") from None


def parse_provider(value: str) -> str:
    name = value.strip().lower()
    if name not in PROVIDERS:
        raise unknown_choice("provider", value, PROVIDERS, limit=len(PROVIDERS))
    return name


def parse_providers(value: str | None) -> list[str]:
    if value is None:
        return list(PROVIDERS)
    names = [v for v in (part.strip() for part in value.split(",")) if v]
    if not names:
        raise BadInput(f"--providers {value!r} names no provider; valid: {', '.join(PROVIDERS)}")
    chosen = [parse_provider(n) for n in names]
    return list(dict.fromkeys(chosen))


def parse_choices(option: str, value: str | None, choices: tuple[str, ...]) -> list[str] | None:
    """A comma-separated subset of ``choices`` (``--tier on_demand,spot``); None when not given."""
    if value is None:
        return None
    names = [v for v in (part.strip().lower() for part in value.split(",")) if v]
    if not names:
        raise BadInput(f"{option} {value!r} names nothing; valid: {', '.join(choices)}")
    for name in names:
        if name not in choices:
            raise BadInput(f"{option}: unknown value {name!r}; valid: {', '.join(choices)}")
    return list(dict.fromkeys(names))


def parse_max_age(option: str, text: str | None, default: int) -> int:
    """A price-age limit in whole days, 0 or more (``--max-price-age-days 14``); ``default`` when
    not given; a one-line BadInput naming the value otherwise."""
    if text is None:
        return default
    try:
        value = float(text.strip())
    except ValueError:
        raise BadInput(f"{option} {text!r} is not a number; give a whole number of days, 0 or more") from None
    if not 0 <= value <= 36500 or value != int(value):
        raise BadInput(f"{option} {text!r} must be a whole number of days from 0 to 36500")
    return int(value)
