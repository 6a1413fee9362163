"""Quantities as pricing pages write them: memory and disk sizes, and commitment terms.

Sizes are returned in GB of 1e9 bytes, the unit of every size field of an offer, converted from
the unit the page shows: "226 GiB" of RAM is 242.7 GB, "1.3 TiB" of disk 1429.4 GB.
"""

from __future__ import annotations

import re

from gpuprice.scrapers.parsing import clean_text, parse_number

GB_PER_UNIT: dict[str, float] = {
    "tib": 1024**4 / 1e9,
    "tb": 1000.0,
    "gib": 1024**3 / 1e9,
    "gb": 1.0,
    "mib": 1024**2 / 1e9,
    "mb": 0.001,
}
# "750 GB", "1,800 GiB", "2 x 3.84 TB" (a count of drives); the first size that states its unit.
_SIZE_WITH_UNIT = re.compile(
    r"(?:(\d+)\s*[x\u00d7]\s*)?(\d[\d,]*(?:\.\d+)?)\s*(TiB|TB|GiB|GB|MiB|MB)\b", re.I
)

# "12 months", "1-year", "3 yr", "36-mo", "one year" ("1 year" is 12 months).
_NUMERIC_TERM = re.compile(r"(\d+)\s*[\-\u2013\s]?\s*(month|mo|year|yr)s?\b", re.I)
_WORD_TERM = re.compile(r"\b(one|two|three|six|twelve)[\s\-\u2013]+(month|year)s?\b", re.I)
_TERM_WORDS = {"one": 1, "two": 2, "three": 3, "six": 6, "twelve": 12}


def size_gb(text: object, *, default_unit: str = "GB") -> float | None:
    """A memory or disk size in GB (1e9 bytes), rounded to 0.1 GB; None when there is no number.

    '1800 GiB' -> 1932.7, '22 TiB SSD' -> 24189.3, '1.5 TB' -> 1500.0, '2 x 3.84 TB' -> 7680.0.
    A bare number ('512') is in ``default_unit`` (one of TiB, TB, GiB, GB, MiB, MB).
    """
    cell = clean_text(text)
    match = _SIZE_WITH_UNIT.search(cell)
    if match:
        drives, number, unit = match.groups()
        value = float(number.replace(",", "")) * int(drives or 1)
    else:
        bare = parse_number(cell)
        if bare is None:
            return None
        value, unit = bare, default_unit
    return round(value * GB_PER_UNIT[unit.lower()], 1)


def term_months(text: object) -> int | None:
    """The commitment term a label or header states, in months; None when it states none.

    '1-year reserved' -> 12, 'Reserved (6 months)' -> 6, '3 yr' -> 36, 'one-year' -> 12.
    """
    cell = clean_text(text)
    match = _NUMERIC_TERM.search(cell)
    if match:
        number = int(match.group(1))
    else:
        match = _WORD_TERM.search(cell)
        if not match:
            return None
        number = _TERM_WORDS[match.group(1).lower()]
    return number * 12 if match.group(2).lower().startswith("y") else number
