"""Multi-request sources stored as one page: the combined JSON document.

Some providers publish prices in several documents: AWS one on-demand file per region (plus
its spot feeds), Azure's Retail Prices API in pages of 1,000 items linked by ``NextPageLink``.
The live fetch asks for each of them politely, one after the other (the same fetcher: robots,
pacing, retries, size caps), and stores what arrived as a single JSON document::

    {"format": "gpuprice-combined/2",
     "pages": [{"url": ..., "status": 200, "text": "<the body exactly as received>"},
               {"url": ..., "status": 200, "base64": "<a body that is not UTF-8>"},
               {"url": ..., "status": null, "error": "HTTP 503 after 4 attempts"}, ...]}

Each body is kept byte for byte as it arrived (its UTF-8 text as a JSON string, or base64 when
it is not UTF-8), never re-serialised: key order, spacing, number spelling and escapes stay the
site's. Readers parse it when they read the part (a body that is not JSON, such as AWS's JSONP
spot feed ``callback({...})``, is a string). Version 1 documents (``"body"``: the JSON parsed and
written again) are still read. The raw page store, the archive (``<provider>/<date>.json``) and
``gpuprice parse`` treat the document as one page of that provider and date, so a replay reads
exactly what the live run saw.
Paging is capped (``max_pages``): a loop of links, or an API that suddenly pages forever,
costs at most that many requests.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from gpuprice.bounded_load import load_json
from gpuprice.scrapers.pages import PageRequest

COMBINED_FORMAT = "gpuprice-combined/2"
VERSION_1_FORMAT = "gpuprice-combined/1"  # parts with a parsed "body" (generated recordings still use it)
READABLE_FORMATS = (VERSION_1_FORMAT, COMBINED_FORMAT)
DEFAULT_MAX_PAGES = 20


class CombinedPart(BaseModel):
    """One request of a combined document: its body (parsed, and the bytes as received), or why
    it is missing."""

    url: str
    status: int | None = None
    body: Any = None
    error: str | None = None
    raw: bytes | None = Field(default=None, exclude=True)  # None: a version 1 document's part

    def stored(self) -> dict[str, Any]:
        """The part as the combined document keeps it: the body's exact bytes, not the parsed body."""
        entry: dict[str, Any] = {"url": self.url, "status": self.status}
        if self.error is not None:
            entry["error"] = self.error
        elif self.raw is not None:
            try:
                entry["text"] = self.raw.decode("utf-8")
            except UnicodeDecodeError:
                entry["base64"] = base64.b64encode(self.raw).decode("ascii")
        else:
            entry["body"] = self.body
        return entry


class PartFailure(Exception):
    """A part could not be fetched (the fetcher's one-line cause, and which URL)."""

    def __init__(self, cause: str, url: str = "") -> None:
        super().__init__(cause)
        self.cause = cause
        self.url = url


# fetch(request) -> (status, body bytes); raises PartFailure with the cause.
FetchPart = Callable[[PageRequest], tuple[int, bytes]]
# next_page(request, parsed body) -> the request of the following page, or None.
NextPage = Callable[[PageRequest, Any], PageRequest | None]


def _decoded(body: bytes) -> Any:
    text = body.decode("utf-8", errors="replace")
    try:
        return load_json(text)
    except ValueError:
        return text


def fetch_combined(
    requests: Sequence[PageRequest],
    fetch: FetchPart,
    *,
    next_page: NextPage | None = None,
    max_pages: int = DEFAULT_MAX_PAGES,
) -> tuple[bytes, list[CombinedPart]]:
    """Fetch every part (and the pages each one links to, up to ``max_pages`` per part).

    Returns the combined document and its parts. Raises PartFailure when a required (not
    ``optional``) part failed, without asking for the parts after it (a half document is no
    use, and the site is spared the rest), or when nothing arrived at all.
    """
    parts: list[CombinedPart] = []
    for first in requests:
        request: PageRequest | None = first
        seen: set[str] = set()
        pages = 0
        while request is not None and pages < max_pages and request.url not in seen:
            seen.add(request.url)
            pages += 1
            try:
                status, body = fetch(request)
            except PartFailure as exc:
                if not first.optional:
                    raise PartFailure(exc.cause, request.url) from None
                parts.append(CombinedPart(url=request.url, error=exc.cause))
                request = None
                break
            decoded = _decoded(body)
            parts.append(CombinedPart(url=request.url, status=status, body=decoded, raw=body))
            request = next_page(request, decoded) if next_page is not None else None
        if request is not None and (pages >= max_pages or request.url in seen):
            reason = "page cap reached" if pages >= max_pages else "link loop"
            parts.append(CombinedPart(url=request.url, error=f"not fetched: {reason} ({max_pages} pages)"))
    if not any(part.error is None for part in parts):
        raise PartFailure("no part arrived")
    document = {"format": COMBINED_FORMAT, "pages": [part.stored() for part in parts]}
    return json.dumps(document, separators=(",", ":")).encode("utf-8"), parts


def combined_parts(payload: Any) -> list[CombinedPart] | None:
    """The parts of a combined document, or None when ``payload`` is not one (a single page)."""
    if not isinstance(payload, dict) or payload.get("format") not in READABLE_FORMATS:
        return None
    pages = payload.get("pages")
    if not isinstance(pages, list):
        return []
    parts = []
    for page in pages:
        if isinstance(page, dict) and isinstance(page.get("url"), str):
            error = page.get("error") if isinstance(page.get("error"), str) else None
            raw = _stored_bytes(page)
            if raw is None and error is None and ("text" in page or "base64" in page):
                error = "stored body unreadable (neither text nor base64)"
            parts.append(
                CombinedPart(
                    url=page["url"],
                    status=page.get("status") if isinstance(page.get("status"), int) else None,
                    body=_decoded(raw) if raw is not None else page.get("body"),
                    error=error,
                    raw=raw,
                )
            )
    return parts


def _stored_bytes(page: dict[str, Any]) -> bytes | None:
    """A version 2 part's body bytes as received, or None (version 1, or unreadable)."""
    text = page.get("text")
    if isinstance(text, str):
        return text.encode("utf-8")
    encoded = page.get("base64")
    if isinstance(encoded, str):
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            return None
    return None


def page_bodies(payload: Any) -> tuple[list[tuple[str, Any]], list[str]]:
    """(url, body) of each page that arrived, and the 'url: error' of each that did not.

    A single page (not a combined document) is one part with an empty URL.
    """
    parts = combined_parts(payload)
    if parts is None:
        return [("", payload)], []
    arrived = [(part.url, part.body) for part in parts if part.error is None]
    failed = [f"{part.url}: {part.error}" for part in parts if part.error is not None]
    return arrived, failed
