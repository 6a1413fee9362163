"""Numbers and text formatted for people, and Markdown escaping for table cells.

Every formatter accepts ``None`` (shown as an em dash) so templates never print "None".
"""

from __future__ import annotations

import datetime as dt
import math
import re

MISSING = "—"


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def usd(value: float | None) -> str:
    """$1,234.56 (negative as -$1.00)."""
    if _missing(value):
        return MISSING
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value):,.2f}"


def usd_range(low: float | None, high: float | None) -> str:
    """$1,234-$1,567: a band's ends ('' when the band is unknown)."""
    if _missing(low) or _missing(high):
        return ""
    return f"{usd(low)}–{usd(high)}"


def usd_rate(value: float | None) -> str:
    """A price per GPU-hour: cents, or more digits when cents would hide the price ($0.045)."""
    if _missing(value):
        return MISSING
    if 0 < abs(value) < 0.1:
        return f"${value:,.4f}".rstrip("0")
    return usd(value)


def usd_compact(value: float | None) -> str:
    """Axis-friendly money: $950, $12.3k, $4.1M."""
    if _missing(value):
        return MISSING
    magnitude = abs(value)
    if magnitude >= 1e6:
        return f"${value / 1e6:,.1f}M"
    if magnitude >= 1e4:
        return f"${value / 1e3:,.1f}k"
    if magnitude >= 100:
        return f"${value:,.0f}"
    return f"${value:,.2f}"


def hours(value: float | None) -> str:
    """3.2 h; 1,234.5 h. Sub-hour runs keep two digits (0.25 h)."""
    if _missing(value):
        return MISSING
    if abs(value) < 1:
        return f"{value:.2f} h"
    return f"{value:,.1f} h"


def hours_range(low: float | None, high: float | None) -> str:
    """12.1–15.3 h: a band's ends ('' when the band is unknown)."""
    if _missing(low) or _missing(high):
        return ""
    return f"{hours(low).removesuffix(' h')}–{hours(high)}"


def duration(value: float | None) -> str:
    """Hours with days alongside when a run takes more than two days: 75.0 h (3.1 d)."""
    if _missing(value):
        return MISSING
    text = hours(value)
    return f"{text} ({value / 24:,.1f} d)" if value >= 48 else text


def gb(value: float | None) -> str:
    """52.5 GB; 1,128 GB for big totals."""
    if _missing(value):
        return MISSING
    if abs(value) >= 1000:
        return f"{value:,.0f} GB"
    return f"{value:,.1f} GB"


def pct(fraction: float | None, *, signed: bool = True) -> str:
    """A fraction as a percentage: 0.123 -> +12.3 %."""
    if _missing(fraction):
        return MISSING
    value = fraction * 100
    return f"{value:+.1f} %" if signed else f"{value:.1f} %"


def ratio(fraction: float | None) -> str:
    """An unsigned fraction such as MFU: 0.4 -> 40.0 %."""
    return pct(fraction, signed=False)


def number(value: float | int | None, digits: int = 0) -> str:
    if _missing(value):
        return MISSING
    return f"{value:,.{digits}f}"


def tokens(value: float | int | None) -> str:
    """Token counts: 1.5B, 200M, 12,000."""
    if _missing(value):
        return MISSING
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(value) >= scale:
            return f"{value / scale:,.3g}{suffix}"
    return f"{value:,.0f}"


def day(value: dt.date | None) -> str:
    if value is None:
        return MISSING
    return value.isoformat()


def timestamp(value: dt.datetime | None) -> str:
    """UTC timestamp to the minute: 2026-10-29 06:00 UTC."""
    if value is None:
        return MISSING
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC)
    return value.strftime("%Y-%m-%d %H:%M UTC")


_ACRONYMS = {
    "usd": "USD",
    "gb": "GB",
    "mfu": "MFU",
    "gpu": "GPU",
    "gpus": "GPUs",
    "lora": "LoRA",
    "qlora": "QLoRA",
    "fsdp": "FSDP",
    "id": "ID",
    "hf": "HF",
    "sla": "SLA",
}


def humanize(name: str) -> str:
    """A field name for a label: tokens_per_sec -> Tokens per sec; storage_usd -> Storage USD."""
    words = [_ACRONYMS.get(word.lower(), word) for word in name.replace("_", " ").split()]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


# Markdown: characters that start markup inside a table cell or inline text.
# Parentheses, # and ! only matter after `]`, at a line start or before `[`, which cannot
# happen inside an escaped cell, so they stay readable when pasted into a chat.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def md_escape(value: object) -> str:
    """Text safe inside a Markdown table cell: no pipes, markup, HTML tags or line breaks."""
    if value is None:
        return ""
    text = " ".join(str(value).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def series_label(provider: str, community: bool, price_basis: str | None, *, catalog: bool = False) -> str:
    """A price-history line's name: ``runpod``, ``runpod (community)``, ``runpod (lowest now)``,
    ``lambda (catalog history)`` (prices imported from a catalog's history, not scraped)."""
    notes = [
        n
        for n, on in (
            ("community", community),
            ("lowest now", price_basis == "lowest_now"),
            ("catalog history", catalog),
        )
        if on
    ]
    return provider + (f" ({', '.join(notes)})" if notes else "")
