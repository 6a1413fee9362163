"""One redirect hop, decided: where it goes, and what the next request keeps.

The fetcher follows redirects by hand so each hop is paced and checked against robots.txt; this
module holds the rules for a hop: a Location is required and must be http(s), a loop or more than
``max_redirects`` hops ends the chain, credentials and validators go to the original host only,
and a 301/302/303 after a POST becomes a GET without a body (what browsers do; 307/308 keep both).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import SplitResult, urljoin, urlsplit

from gpuprice.scrapers.http_exchange import Exchange, Fatal
from gpuprice.scrapers.redact import scrub_url

_VALIDATORS = ("if-none-match", "if-modified-since")


@dataclass(frozen=True)
class NextRequest:
    """The request that follows a redirect."""

    url: str
    method: str
    headers: dict[str, str]
    content: bytes | None


def next_request(
    exchange: Exchange,
    *,
    origin: SplitResult,
    seen: list[str],
    hop: int,
    max_redirects: int,
    method: str,
    headers: dict[str, str],
    content: bytes | None,
    secret_headers: frozenset[str],
) -> NextRequest:
    """The request after ``exchange`` (a redirect, hop number ``hop``); Fatal when it must stop.

    ``origin`` is the first URL's parts, ``seen`` every URL asked for so far.
    """
    location = exchange.headers.get("location", "").strip()
    if not location:
        raise Fatal(f"HTTP {exchange.status} redirect without a Location header", exchange.status)
    target = urljoin(exchange.url, location)
    parts = urlsplit(target)
    if parts.scheme not in ("http", "https"):
        raise Fatal(f"redirect to a non-HTTP URL {scrub_url(target)}", exchange.status)
    if target in seen:
        chain = " -> ".join(scrub_url(u) for u in [*seen, target])
        raise Fatal(f"redirect loop: {chain}", exchange.status)
    if hop == max_redirects:
        raise Fatal(f"more than {max_redirects} redirects (last to {scrub_url(target)})")
    if (parts.scheme, parts.netloc.lower()) != (origin.scheme, origin.netloc.lower()):
        # Credentials and validators belong to the original host only.
        headers = {
            k: v
            for k, v in headers.items()
            if k.lower() not in secret_headers and k.lower() not in _VALIDATORS
        }
    if exchange.status in (301, 302, 303) and method == "POST":
        method, content = "GET", None  # what browsers do; 307/308 keep method and body
        headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
    return NextRequest(url=target, method=method, headers=headers, content=content)
