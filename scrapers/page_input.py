"""What every provider parser does first: turn the page's bytes into text, the same way for all.

Bytes reach a parser from the live fetcher and the archive reader (both already decompressed)
and from ``gpuprice parse PROVIDER FILE``, where the file may be a saved ``page.html.gz``. So a
parser sniffs gzip itself, by the magic bytes rather than a file name, and inflates with a cap:
a few kilobytes of gzip can expand to gigabytes.

Pages are UTF-8. Undecodable bytes are replaced rather than fatal (one bad byte in a footer
must not cost a day of prices), and the report says so. A blank page has no price structure.
"""

from __future__ import annotations

from gpuprice.scrapers.bounds import check_html_depth
from gpuprice.scrapers.gunzip import GZIP_MAGIC, MAX_PAGE_BYTES, GunzipError, gunzip_capped
from gpuprice.scrapers.offer import ParseReport, StructureMissing

UNDECODABLE_NOTE = "page is not valid UTF-8: undecodable bytes replaced"
# The same note as the nebius, crusoe and massedcompute parsers have always worded it: their tests
# and the reports already in warehouses compare it verbatim, so those parsers keep passing it.
UNDECODABLE_NOTE_SEMICOLON = "page is not valid UTF-8; undecodable bytes replaced"

# Sent by parsers whose pages answer bare HTTP clients with a bot wall instead of the prices.
BROWSER_HEADERS: dict[str, str] = {
    "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) gpuprice/0.1 (+price tracker)",
    "Accept": "text/html,application/xhtml+xml",
    "Accept-Language": "en-US,en;q=0.8",
}


def page_text(
    content: bytes,
    report: ParseReport,
    *,
    max_bytes: int = MAX_PAGE_BYTES,
    undecodable_note: str = UNDECODABLE_NOTE,
) -> str:
    """The page as text: gunzipped when it is gzip, UTF-8 decoded, byte-order marks stripped.

    Undecodable bytes become U+FFFD and ``undecodable_note`` is added to ``report.notes``.
    Raises :class:`StructureMissing` (naming ``report.provider``) for an empty or blank page and
    for gzip that is corrupt, truncated or inflates past ``max_bytes``.
    """
    if content[:2] == GZIP_MAGIC:
        content = gunzip_page(content, report.provider, max_bytes=max_bytes)
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        text = content.decode("utf-8", errors="replace")
        report.notes.append(undecodable_note)
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise StructureMissing(report.provider, "empty page")
    check_html_depth(text, report.provider)  # 20,000 nested elements would stall the HTML reader
    return text


def gunzip_page(content: bytes, provider: str, *, max_bytes: int = MAX_PAGE_BYTES) -> bytes:
    """Inflate a gzip body, concatenated members included, to at most ``max_bytes`` bytes.

    Raises :class:`StructureMissing` for ``provider`` when the body is corrupt, truncated or
    inflates past the cap (never holding more than ``max_bytes`` + 1 inflated bytes).
    """
    try:
        return gunzip_capped(content, max_bytes)
    except GunzipError as exc:
        if exc.reason == "too_large":
            raise StructureMissing(provider, f"gzip body inflates past {max_bytes:,} bytes") from None
        if exc.reason == "truncated":
            raise StructureMissing(provider, "corrupt gzip body (truncated stream)") from None
        raise StructureMissing(provider, f"corrupt gzip body ({exc.detail})") from None
