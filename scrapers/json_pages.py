"""What the JSON API parsers (azure, aws, oci, vastai) share: reading a page that may be a
combined multi-request document (``scrapers/multipage.py``), and reading a JSON price."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpuprice.bounded_load import load_json
from gpuprice.scrapers.gunzip import MAX_PAGE_BYTES
from gpuprice.scrapers.multipage import page_bodies
from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.offer_sink import OfferSink
from gpuprice.scrapers.page_input import page_text
from gpuprice.scrapers.parsing import parse_price

# A combined document of ten regions is larger than one pricing page; still capped.
MAX_COMBINED_BYTES = 8 * MAX_PAGE_BYTES


def json_pages(
    content: bytes, sink: OfferSink, *, max_bytes: int = MAX_COMBINED_BYTES
) -> list[tuple[str, Any]]:
    """(url, body) of each page in ``content`` (one page, or the parts of a combined document).

    Parts that failed to arrive are noted in the report ("part missing: url: cause"). Raises
    StructureMissing for a page that is not JSON at all.
    """
    text = page_text(content, sink.report, max_bytes=max_bytes)
    try:
        payload = load_json(text)
    except ValueError as exc:
        raise StructureMissing(sink.provider, f"invalid JSON ({exc})") from None
    pages, failed = page_bodies(payload)
    for failure in failed:
        sink.note(f"part missing: {failure}")
    return pages


def positive_price(value: Any) -> Decimal | None:
    """A JSON price: None for null/0/absent ("not offered"); ValueError when unreadable or negative."""
    if isinstance(value, bool):
        raise ValueError(f"not a price: {value!r}")
    if value is None or value == "":
        return None
    price = parse_price(value)
    if price is None or price.value == 0:
        return None
    if price.value < 0:
        raise ValueError(f"negative price: {value!r}")
    return price.value


def offered_price(sink: OfferSink, raw: str, value: Any) -> Decimal | None:
    """The price of one JSON row for ``sink``: None when it is not offered (null/0: counted as an
    unpriced row) or unreadable (the row rejected with the reason)."""
    try:
        price = positive_price(value)
    except ValueError as exc:
        sink.reject(raw, str(exc))
        return None
    if price is None:
        sink.report.unpriced_rows += 1
    return price
