"""Shared parsing helpers: prices, numbers and header-driven column mapping.

Parsers map columns by header text, never by position, so reordered or added columns
on a provider's page do not shift values into the wrong field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

# Text that states a dollar price ("$3.90", "USD 2"): what makes an element a price cell or section.
DOLLAR_PRICE = re.compile(r"(?:\$|\busd\b)\s*\d", re.I)

# One number as pages write it: grouped thousands, decimals, an optional exponent ("2.5e-05").
_NUMBER = r"(?:\d{1,3}(?:[,\u202f\u00a0 ]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d{1,4}\b)?"
# A minus sign written next to the number or its "$": ASCII, U+2212 and the dashes pages use for it.
_MINUS = "-\u2212\u2012\u2013\ufe63\uff0d"
_PRICE_RE = re.compile(
    rf"(?P<from>\bfrom\b)?\s*(?P<open>\()?(?P<sign1>(?<![\w.])[{_MINUS}])?"
    rf"(?:(?P<cur>US\$|USD\s?|\$)\s*(?P<sign2>[{_MINUS}])?)?"
    # A number glued to a word is part of a name ("H100"), not a price.
    rf"(?:(?<=[$\s])|(?<=USD)|(?<![A-Za-z\d.,]))(?P<num>{_NUMBER})(?P<close>\))?",
    re.I,
)
_UNPRICED_RE = re.compile(
    r"contact\s*(?:us|sales)|talk\s+to\s+(?:us|sales)|coming\s+soon|sold\s+out|request|call\s+us|inquire|n/?a\b|^[-\u2013\u2014\s]*$",
    re.I,
)
# Any currency but the US dollar, as a symbol, a dollar with a country prefix or an ISO code.
_OTHER_CURRENCY = re.compile(
    r"[\u20ac\u00a3\u00a5\u20b9\u20a9\u20bd\u20ba\u20aa\u0e3f\u20ab\u20b1\u20a6]"
    r"|(?<![a-z])(?:C|CA|A|AU|S|SG|HK|NZ|NT|R|MX|Z)\$"
    r"|\b(?:EUR|GBP|JPY|CNY|RMB|INR|CAD|AUD|CHF|SEK|NOK|DKK|PLN|SGD|HKD|KRW|BRL|MXN|NZD|ZAR|TRY|CZK|HUF|ILS|TWD|AED)\b"
    r"|\b(?:euros?|pounds?\s+sterling|yen)\b",
    re.I,
)
_CURRENCY_NAMES = {"\u20ac": "EUR", "\u00a3": "GBP", "\u00a5": "JPY/CNY", "\u20b9": "INR"}
# A rate per some period other than the hour ("/month", "per instance-month", "monthly").
_HOURLY = re.compile(
    r"(?:/|\bper\b|\ban?\b)\s*(?:gpu|instance|node|server)?[\s/-]*(?:hr|hour|h)\b|\bhourly\b|-h\b|\bgpu-?h",
    re.I,
)
_OTHER_PERIOD = re.compile(
    r"(?:/|\bper\b|\ban?\b)\s*(?:gpu|instance|node|server|card)?[\s/-]*(?P<unit>month|mo|year|yr|annum|week|wk|day|minute|min|second|sec)\b"
    r"|\b(?P<adverb>monthly|yearly|annually|weekly|daily)\b",
    re.I,
)
# Bounds on any single price a page can state (per GPU-hour or per instance-hour). Real prices
# run from about $0.05 (old consumer cards) to a few hundred dollars (a 72-GPU rack per hour); the
# bounds only catch numbers that cannot be prices (an exponent, a stray ID), never a market price.
MIN_PRICE_USD = Decimal("0.0001")  # the contract's 4-decimal resolution: less would store as $0
MAX_PRICE_USD = Decimal("100000")
# The least a GPU-hour can cost and be a price: a page or an import below it is misread (an
# exponent, a unit slip), never the market. The cheapest real offers (old consumer cards on
# marketplaces) are a few cents; Vast.ai's hourly minimums are $0.02-0.05.
MIN_USD_PER_GPU_HOUR = Decimal("0.01")
# Characters that have no place inside a price: C0/C1 controls (tab, newline and carriage
# return aside, which are spacing in markup), zero-width and bidirectional controls, and the
# replacement character (an HTML parser's stand-in for a NUL or an undecodable byte). A price
# they split ("$3.\x0099") is refused, never read up to the split.
_PRICE_CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ufffd]"
)
# A number followed by a spaced-out decimal part or more digits ("$ 3 . 9 9", "3 .99"): one price
# written in pieces, not a price of 3.
_SPLIT_NUMBER = re.compile(r"[.,]\d|\s*\.\s*\d|\s+\d+\s*\.\s*\d")
# A GPU count written with a minus sign ("-8x NVIDIA H100", "\u22128 x A100").
_NEGATIVE_COUNT = re.compile(rf"(?<![\w.])[{_MINUS}]\s*\d+\s*[x\u00d7](?![a-z\d])", re.I)


def clean_text(value: object) -> str:
    """Collapse whitespace (including non-breaking spaces) and strip."""
    return " ".join(str(value or "").replace("\u00a0", " ").split())


# Markup for text a page shows struck through: an old price next to the current one.
STRUCK_TAGS = ("s", "del", "strike")
_STRUCK_STYLE = re.compile(r"line-through", re.I)
_STRUCK_CLASS = re.compile(
    r"(?:^|[-_])(?:line-through|strike(?:through)?|old-price|was-price|price-old)$", re.I
)


def cell_text(cell: Any) -> str:
    """The visible, current text of a table cell (a BeautifulSoup tag): struck-through parts
    (<s>, <del>, <strike>, ``text-decoration: line-through``, a ``line-through`` class) dropped,
    whitespace collapsed. ``<td><s>$7.99</s> $6.69</td>`` -> '$6.69'."""
    if cell is None:
        return ""
    if not hasattr(cell, "find_all"):
        return clean_text(cell)
    struck = [tag for tag in cell.find_all(True) if _is_struck(tag)]
    if not struck:
        return clean_text(cell.get_text(" "))
    inside = {id(tag) for tag in struck}
    parts = []
    for piece in cell.find_all(string=True):
        if any(id(parent) in inside for parent in piece.parents):
            continue
        if type(piece).__name__ in ("Comment", "Declaration", "ProcessingInstruction", "Doctype"):
            continue
        parts.append(str(piece))
    return clean_text(" ".join(parts))


def _is_struck(tag: Any) -> bool:
    if tag.name in STRUCK_TAGS:
        return True
    if _STRUCK_STYLE.search(str(tag.get("style") or "")):
        return True
    classes = tag.get("class") or []
    return any(_STRUCK_CLASS.search(c) for c in classes)


@dataclass(frozen=True)
class Price:
    value: Decimal
    is_from: bool  # "from $x": a lower bound over host variants


def parse_price(text: object, *, header: object = None) -> Price | None:
    """Read a positive USD price per hour: '$2.49', 'from $0.99/GPU-hr', '$1,234.56', '2.1', or a
    JSON number (int/float/Decimal, exactly as given: 2.5e-05 is 0.000025, not 2.5).

    ``header`` is the column's header text: a currency or period stated there applies to the cell.
    Returns None for unpriced cells ('Contact sales', '-', '') so they are never read as 0.
    Raises ValueError, naming the text, for anything else that is not a plain USD hourly price:
    a negative sign (``-$1.00``, ``$-1.00``, ``($42.00)``, ``\u2212$42.00``), another currency
    (``\u20ac6.69``, ``6.69 GBP``, ``42,00 \u20ac``, a header ``(EUR)``), a rate per month/year/day
    (not converted: a monthly price is a different product, not 730 hours of the hourly one),
    a magnitude no price has (``1e16``, ``2.5e-05``), or garbage ('$3.2.9', 'cheap').
    """
    if isinstance(text, bool):
        raise ValueError(f"not a price: {text!r}")
    if isinstance(text, (int, float, Decimal)):
        return _json_price(text, header)
    if text is not None and not isinstance(text, str):  # a JSON object or list, never read as its digits
        raise ValueError(f"not a price (a {type(text).__name__}, not a number or text): {str(text)[:80]!r}")
    control = _PRICE_CONTROL.search(text or "")
    if control:
        raise ValueError(
            f"not a price (control or replacement character U+{ord(control.group(0)):04X} inside): {text!r}"
        )
    s = clean_text(text)
    if not s or _UNPRICED_RE.search(s):
        return None
    _check_currency_and_period(s, clean_text(header))
    m = _PRICE_RE.search(s)
    # "$3.2.9" is garbage, not $3.20; "$ 3 . 9 9" a price in pieces, not $3.
    if not m or _SPLIT_NUMBER.match(s[m.end() :]):
        raise ValueError(f"not a price: {s!r}")
    digits = re.sub(r"[,\u202f\u00a0 ]", "", m.group("num"))
    try:
        value = Decimal(digits)
    except InvalidOperation as exc:  # pragma: no cover - regex guarantees digits
        raise ValueError(f"not a price: {s!r}") from exc
    negative = bool(m.group("sign1") or m.group("sign2")) or bool(m.group("open") and m.group("close"))
    if negative:
        raise ValueError(f"negative price: {s!r}")
    _check_magnitude(value, s)
    is_from = bool(m.group("from")) or s.lower().startswith("from")
    return Price(value=value, is_from=is_from)


def _json_price(number: int | float | Decimal, header: object) -> Price | None:
    value = Decimal(repr(number)) if isinstance(number, float) else Decimal(number)
    if not value.is_finite():
        raise ValueError(f"not a price: {number!r}")
    if header is not None:
        _check_currency_and_period("", clean_text(header))
    if value < 0:
        raise ValueError(f"negative price: {number!r}")
    _check_magnitude(value, repr(number))
    return Price(value=value, is_from=False)


def _check_currency_and_period(cell: str, header: str) -> None:
    for where, text in (("", cell), ("header ", header)):
        if not text:
            continue
        other = _OTHER_CURRENCY.search(text)
        if other:
            code = _CURRENCY_NAMES.get(other.group(0), other.group(0).upper())
            shown = f"{cell!r} under {header!r}" if where else repr(cell)
            raise ValueError(f"not a USD price ({where}{code}): {shown}")
        period = _OTHER_PERIOD.search(text)
        if period and not _HOURLY.search(text):
            unit = (period.group("unit") or period.group("adverb")).lower()
            shown = f"{cell!r} under {header!r}" if where else repr(cell)
            raise ValueError(f"not an hourly price ({where}per {unit}): {shown}")


def negative_count(text: object) -> str | None:
    """The negative GPU count a name or label writes ("-8x NVIDIA H100" -> "-8x"), or None."""
    match = _NEGATIVE_COUNT.search(str(text or ""))
    return match.group(0) if match else None


def check_gpu_hour_floor(usd_per_gpu_hour: float | Decimal, shown: object) -> None:
    """ValueError when a per-GPU-hour price is below :data:`MIN_USD_PER_GPU_HOUR` (but not 0,
    which callers read as "not offered")."""
    value = Decimal(str(usd_per_gpu_hour))
    if 0 < value < MIN_USD_PER_GPU_HOUR:
        raise ValueError(
            f"implausible price: ${value:f} per GPU-hour is below the floor of ${MIN_USD_PER_GPU_HOUR}: {shown!r}"
        )


def _check_magnitude(value: Decimal, shown: str) -> None:
    if value == 0:
        return  # "$0.00": callers treat 0 as "not offered", never as a price
    if value < MIN_PRICE_USD:
        raise ValueError(f"price below ${MIN_PRICE_USD} (would store as $0): {shown!r}")
    if value > MAX_PRICE_USD:
        raise ValueError(f"price above ${MAX_PRICE_USD:,} is no hourly price: {shown!r}")


_SIGNED_NUMBER = re.compile(
    rf"(?:(?<![\w.])(?P<sign>[{_MINUS}]))?(?P<num>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<exp>[eE][+-]?\d{{1,4}}\b)?"
)


def parse_number(text: object) -> float | None:
    """First number in a cell, with its sign and exponent ('80GB' -> 80, '2,048' -> 2048,
    '1.5 TB' -> 1.5, '-4' -> -4, '1e3' -> 1000); None if absent. JSON numbers pass through.
    Callers bound the value (a GPU count of -4 is rejected, never read as 4)."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text) if math.isfinite(text) else None
    s = clean_text(text)
    m = _SIGNED_NUMBER.search(s)
    if not m:
        return None
    value = float(m.group("num").replace(",", "") + (m.group("exp") or ""))
    if not math.isfinite(value):
        return None
    return -value if m.group("sign") else value


def normalize_header(text: object) -> str:
    """Lower-case header text with punctuation folded to spaces: 'PRICE/GPU/HR*' -> 'price gpu hr'."""
    return " ".join(re.sub(r"[^a-z0-9$]+", " ", clean_text(text).lower()).split())


def map_columns(
    headers: Sequence[str],
    wanted: Mapping[str, Sequence[str]],
    *,
    required: Sequence[str] = (),
) -> tuple[dict[str, int], list[str], list[str]]:
    """Map logical column names to positions by header text.

    ``wanted`` maps a logical name to regular expressions tried against the normalized header.
    Returns (mapping, missing_required, unexpected_headers). The first header matching a
    pattern wins; each header is used once.
    """
    normalized = [normalize_header(h) for h in headers]
    mapping: dict[str, int] = {}
    used: set[int] = set()
    for name, patterns in wanted.items():
        for pattern in patterns:
            rx = re.compile(pattern)
            hit = next((i for i, h in enumerate(normalized) if i not in used and rx.search(h)), None)
            if hit is not None:
                mapping[name] = hit
                used.add(hit)
                break
    missing = [name for name in required if name not in mapping]
    unexpected = [clean_text(headers[i]) for i in range(len(headers)) if i not in used and normalized[i]]
    return mapping, missing, unexpected
