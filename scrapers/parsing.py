"""Shared parsing helpers: prices, numbers and header-driven column mapping.

Parsers map columns by header text, never by position, so reordered or added columns
on a provider's page do not shift values into the wrong field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

_PRICE_RE = re.compile(
    r"(?P<from>\bfrom\b)?\s*(?:US)?\$?\s*(?P<num>\d{1,3}(?:[,\u202f\u00a0 ]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)",
    re.I,
)
_UNPRICED_RE = re.compile(
    r"contact\s*(?:us|sales)|talk\s+to\s+(?:us|sales)|coming\s+soon|sold\s+out|request|call\s+us|inquire|n/?a\b|^[-\u2013\u2014\s]*$",
    re.I,
)


def clean_text(value: object) -> str:
    """Collapse whitespace (including non-breaking spaces) and strip."""
    return " ".join(str(value or "").replace("\u00a0", " ").split())


@dataclass(frozen=True)
class Price:
    value: Decimal
    is_from: bool  # "from $x": a lower bound over host variants


def parse_price(text: object) -> Price | None:
    """Read a USD price such as '$2.49', 'from $0.99/GPU-hr', '$1,234.56', '2.1'.

    Returns None for unpriced cells ('Contact sales', '-', '') so they are never read as 0.
    Raises ValueError for text that is neither a price nor a known unpriced marker.
    """
    s = clean_text(text)
    if not s or _UNPRICED_RE.search(s):
        return None
    m = _PRICE_RE.search(s)
    if not m or re.match(r"[.,]\d", s[m.end() :]):  # "$3.2.9" is garbage, not $3.20
        raise ValueError(f"not a price: {s!r}")
    digits = re.sub(r"[,\u202f\u00a0 ]", "", m.group("num"))
    try:
        value = Decimal(digits)
    except InvalidOperation as exc:  # pragma: no cover - regex guarantees digits
        raise ValueError(f"not a price: {s!r}") from exc
    is_from = bool(m.group("from")) or s.lower().startswith("from")
    return Price(value=value, is_from=is_from)


def parse_number(text: object) -> float | None:
    """First number in a cell ('80GB' -> 80, '2,048' -> 2048, '1.5 TB' -> 1.5); None if absent."""
    s = clean_text(text)
    m = re.search(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", s)
    if not m:
        return None
    return float(m.group(0).replace(",", ""))


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
