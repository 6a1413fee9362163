"""A fake internet for live runs: every provider host answers through one httpx.MockTransport.

Each provider is either healthy (its newest sample-archive page, as its live request expects
it) or given one fault. A fault applies to every host the provider's live requests use (Runpod's
GraphQL API and its HTML fallback both fail), robots.txt is missing (a 404 allows everything),
and the fetcher never sleeps for real: the waits it asks for are recorded per provider.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from faults.pages import CAPTCHA_PAGE, LOGIN_PAGE, healthy_page, invalid_utf8
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.scrapers.registry import provider_parser

MB = 1024 * 1024


class _Chunks(httpx.SyncByteStream):
    """A streamed body (as a socket delivers it), optionally breaking off with an error."""

    def __init__(self, chunks: Iterator[bytes] | list[bytes], error: Exception | None = None) -> None:
        self.chunks = chunks
        self.error = error

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks
        if self.error is not None:
            raise self.error


def _endless(chunk_size: int, total: int) -> Iterator[bytes]:
    block = b"<tr><td>H100</td><td>$2.00</td></tr>".ljust(chunk_size, b" ")
    for _ in range(total // chunk_size):
        yield block


@dataclass(frozen=True)
class HttpFault:
    """One way a provider's server misbehaves, and what the run must report for it."""

    name: str
    expect: str  # a substring the provider's FAILED line must contain (the cause)
    body_kept: bool  # whether a body arrived, so the raw store must hold it
    respond: Callable[[httpx.Request, bytes, int], httpx.Response]  # (request, healthy body, attempt)


def _status(
    code: int, headers: dict[str, str] | None = None
) -> Callable[[httpx.Request, bytes, int], httpx.Response]:
    return lambda request, body, attempt: httpx.Response(code, headers=headers or {}, content=b"busy")


def _refused(request: httpx.Request, body: bytes, attempt: int) -> httpx.Response:
    raise httpx.ConnectError("[Errno 111] Connection refused", request=request)


def _read_timeout(request: httpx.Request, body: bytes, attempt: int) -> httpx.Response:
    raise httpx.ReadTimeout("timed out", request=request)


def _truncated(request: httpx.Request, body: bytes, attempt: int) -> httpx.Response:
    # The server promised the whole page, then the connection closed after a third of it.
    return httpx.Response(
        200,
        headers={"content-length": str(len(body)), "content-type": "text/html"},
        stream=_Chunks([body[: len(body) // 3]]),
    )


def _empty(request: httpx.Request, body: bytes, attempt: int) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/html"}, content=b"")


def _page(content: bytes) -> Callable[[httpx.Request, bytes, int], httpx.Response]:
    return lambda request, body, attempt: httpx.Response(
        200, headers={"content-type": "text/html"}, content=content
    )


def _redirect_loop(request: httpx.Request, body: bytes, attempt: int) -> httpx.Response:
    # /pricing -> /pricing/ -> /pricing (a CDN and an app server that disagree about slashes).
    path = request.url.path
    target = path[:-1] if path.endswith("/") else path + "/"
    return httpx.Response(301, headers={"location": target})


def _oversize(request: httpx.Request, body: bytes, attempt: int) -> httpx.Response:
    # No Content-Length (chunked): the cap has to be enforced while reading the stream.
    return httpx.Response(200, headers={"content-type": "text/html"}, stream=_Chunks(_endless(MB, 40 * MB)))


_BOMB = gzip.compress(b"\0" * (20 * MB), compresslevel=9, mtime=0)  # ~20 KB that inflates to 20 MB


def _gzip_bomb(request: httpx.Request, body: bytes, attempt: int) -> httpx.Response:
    return httpx.Response(
        200,
        headers={"content-type": "text/html", "content-encoding": "gzip", "content-length": str(len(_BOMB))},
        stream=_Chunks([_BOMB]),
    )


def _invalid_utf8(request: httpx.Request, body: bytes, attempt: int) -> httpx.Response:
    return httpx.Response(
        200, headers={"content-type": "text/html; charset=utf-8"}, content=invalid_utf8(body)
    )


def _flaky_then_healthy(request: httpx.Request, body: bytes, attempt: int) -> httpx.Response:
    if attempt == 1:
        return httpx.Response(503, headers={"retry-after": "3"}, content=b"overloaded")
    return httpx.Response(200, content=body)


FAULTS: dict[str, HttpFault] = {
    f.name: f
    for f in (
        HttpFault("http_429_retry_after", "HTTP 429", False, _status(429, {"retry-after": "7"})),
        HttpFault("http_500", "HTTP 500", False, _status(500)),
        HttpFault("http_502", "HTTP 502", False, _status(502)),
        HttpFault("http_503", "HTTP 503", False, _status(503)),
        HttpFault("connection_refused", "connection failed", False, _refused),
        HttpFault("read_timeout", "read timeout", False, _read_timeout),
        HttpFault("truncated_body", "truncated body", False, _truncated),
        HttpFault("empty_200", "empty body", False, _empty),
        HttpFault("login_page_200", "no price structure", True, _page(LOGIN_PAGE)),
        HttpFault("captcha_page_200", "no price structure", True, _page(CAPTCHA_PAGE)),
        HttpFault("redirect_loop", "redirect loop", False, _redirect_loop),
        HttpFault("body_over_cap", "byte cap", False, _oversize),
        HttpFault("gzip_bomb", "gzip bomb", False, _gzip_bomb),
        HttpFault("invalid_utf8", "no price structure", True, _invalid_utf8),
        HttpFault("http_404_page_gone", "HTTP 404", False, _status(404)),
    )
}
# Not a fault for the run: a 503 with Retry-After once, then the page (the provider must land).
TRANSIENT_503 = HttpFault("transient_503", "", True, _flaky_then_healthy)


def _combined_part(body: bytes, request: httpx.Request) -> bytes:
    """A recorded multi-request page (scrapers/multipage.py) answers each request with the part
    recorded for the same host and path; a part recorded as missing, or none at all, with b""
    (served as an empty body, which the fetcher refuses: that part did not arrive)."""
    if not body.lstrip().startswith(b"{") or b'"gpuprice-combined/1"' not in body[:200]:
        return body
    document = json.loads(body)
    wanted = (request.url.host.lower(), request.url.path)
    for part in document.get("pages", []):
        recorded = httpx.URL(part.get("url", ""))
        if (recorded.host.lower(), recorded.path) == wanted:
            if part.get("error") or part.get("body") is None:
                return b""
            content = part["body"]
            return (content if isinstance(content, str) else json.dumps(content)).encode("utf-8")
    return b""


def provider_hosts() -> dict[str, str]:
    """host -> provider, from every provider's live requests."""
    hosts = {}
    for provider in PROVIDERS:
        for request in provider_parser(provider).live_requests():
            hosts[urlsplit(request.url).netloc.lower()] = provider
    return hosts


@dataclass
class FakeInternet:
    """The transport handler: provider -> fault (absent: healthy); records requests and sleeps."""

    faults: dict[str, HttpFault]
    requests: dict[str, list[httpx.Request]] = field(default_factory=lambda: defaultdict(list))
    sent: dict[str, list[bytes]] = field(default_factory=lambda: defaultdict(list))  # complete 200 bodies
    sleeps: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.hosts = provider_hosts()
        self.pages = {}
        for provider in PROVIDERS:
            body, kind = healthy_page(provider)
            self.pages[provider] = {kind: body}
            if provider == "runpod":  # the HTML fallback page serves the older recorded HTML page
                html, _ = healthy_page(provider, "2026-07-16")
                self.pages[provider]["html"] = html

    def healthy_body(self, provider: str, request: httpx.Request) -> bytes:
        pages = self.pages[provider]
        wants_json = "json" in request.headers.get("accept", "")
        body = pages.get("json" if wants_json else "html") or next(iter(pages.values()))
        return _combined_part(body, request)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        provider = self.hosts.get(request.url.host.lower())
        if provider is None:
            raise httpx.ConnectError(f"no route to {request.url.host} (test network)", request=request)
        if request.url.path == "/robots.txt":
            return httpx.Response(404)
        seen = self.requests[provider]
        seen.append(request)
        body = self.healthy_body(provider, request)
        fault = self.faults.get(provider)
        if fault is None:
            response = httpx.Response(200, headers={"content-type": "text/html"}, content=body)
        else:
            response = fault.respond(request, body, len(seen))
        if response.status_code == 200:
            try:
                self.sent[provider].append(response.content)
            except httpx.ResponseNotRead:  # streamed: it may break off, nothing complete was sent
                pass
        return response

    def fetcher_factory(self):
        """A drop-in for ``scrapers.collect.PoliteFetcher`` that uses this transport."""
        from gpuprice.scrapers.fetch import PoliteFetcher

        def make(*args, **kwargs):
            kwargs.setdefault("transport", httpx.MockTransport(self))
            kwargs.setdefault("sleep", self.sleeps.append)
            return PoliteFetcher(*args, **kwargs)

        return make
