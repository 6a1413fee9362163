"""Multi-request sources stored as one page: the combined JSON document.

Some providers publish prices in several documents: AWS one on-demand file per region (plus
its spot feeds), Azure's Retail Prices API in pages of 1,000 items linked by ``NextPageLink``.
The live fetch asks for each of them politely, one after the other (the same fetcher: robots,
pacing, retries, size caps), and stores what arrived as a single JSON document::

    {"format": "gpuprice-combined/1",
     "pages": [{"url": ..., "status": 200, "body": <the JSON as received>},
               {"url": ..., "status": null, "error": "HTTP 503 after 4 attempts"}, ...]}

A body that is not JSON (AWS's spot feed is JSONP, ``callback({...})``) is kept as a string.
The raw page store, the archive (``<provider>/<date>.json``) and ``gpuprice parse`` then treat
it as one page of that provider and date, so a replay reads exactly what the live run saw.
Paging is capped (``max_pages``): a loop of links, or an API that suddenly pages forever,
costs at most that many requests.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from gpuprice.bounded_load import load_json
from gpuprice.scrapers.pages import PageRequest

COMBINED_FORMAT = "gpuprice-combined/1"
DEFAULT_MAX_PAGES = 20


class CombinedPart(BaseModel):
    """One request of a combined document: its body, or why it is missing."""

    url: str
    status: int | None = None
    body: Any = None
    error: str | None = None


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
            parts.append(CombinedPart(url=request.url, status=status, body=decoded))
            request = next_page(request, decoded) if next_page is not None else None
        if request is not None and (pages >= max_pages or request.url in seen):
            reason = "page cap reached" if pages >= max_pages else "link loop"
            parts.append(CombinedPart(url=request.url, error=f"not fetched: {reason} ({max_pages} pages)"))
    if not any(part.error is None for part in parts):
        raise PartFailure("no part arrived")
    document = {"format": COMBINED_FORMAT, "pages": [part.model_dump() for part in parts]}
    return json.dumps(document, separators=(",", ":")).encode("utf-8"), parts


def combined_parts(payload: Any) -> list[CombinedPart] | None:
    """The parts of a combined document, or None when ``payload`` is not one (a single page)."""
    if not isinstance(payload, dict) or payload.get("format") != COMBINED_FORMAT:
        return None
    pages = payload.get("pages")
    if not isinstance(pages, list):
        return []
    parts = []
    for page in pages:
        if isinstance(page, dict) and isinstance(page.get("url"), str):
            parts.append(
                CombinedPart(
                    url=page["url"],
                    status=page.get("status") if isinstance(page.get("status"), int) else None,
                    body=page.get("body"),
                    error=page.get("error") if isinstance(page.get("error"), str) else None,
                )
            )
    return parts


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
