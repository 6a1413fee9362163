"""One HTTP exchange, redirects not followed: the status sorted into worth retrying or not, the
body read as a stream and capped, after decompression too.

We decode gzip/deflate ourselves with bounded output, so neither a huge page nor a gzip bomb can
fill memory. Retries (and their pacing) are the fetcher's (``scrapers/fetch.py``); this module says
only whether a failure is worth one: :class:`Retryable` (429, 5xx, transport errors, a truncated
body, with the server's ``Retry-After``) or :class:`Fatal`.
"""

from __future__ import annotations

import datetime as dt
import email.utils
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel

from gpuprice.scrapers.gunzip import CappedInflater, GunzipError

RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


class Exchange(BaseModel):
    """One HTTP exchange without following redirects."""

    url: str
    status: int
    reason: str = ""
    headers: dict[str, str]
    body: bytes = b""
    attempts: int = 1


class Retryable(Exception):
    def __init__(self, cause: str, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.status = status
        self.retry_after = retry_after


class Fatal(Exception):
    def __init__(self, cause: str, status: int | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.status = status


class _BoundedInflater:
    """One Content-Encoding undone with the shared capped inflater, its errors worded for HTTP."""

    def __init__(self, encoding: str, limit: int) -> None:
        self.encoding = encoding
        self.limit = limit
        self._inflater = CappedInflater("gzip" if encoding in ("gzip", "x-gzip") else "deflate", limit)

    def feed(self, data: bytes) -> bytes:
        try:
            return self._inflater.feed(data)
        except GunzipError as exc:
            if exc.reason == "too_large":
                raise Fatal(f"body inflates past the {self.limit}-byte cap ({self.encoding} bomb?)") from None
            raise Fatal(f"corrupt {self.encoding} body: {exc.detail}") from None

    def finish(self) -> None:
        try:
            self._inflater.finish()
        except GunzipError:
            raise Retryable(f"truncated {self.encoding} body (the connection ended early)") from None


def _decoders(content_encoding: str, limit: int) -> list[_BoundedInflater]:
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    decoders: list[_BoundedInflater] = []
    for coding in reversed(codings):  # the last coding applied is undone first
        if coding == "identity":
            continue
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise Fatal(f"unsupported Content-Encoding {coding!r} (we ask for gzip or deflate)")
        decoders.append(_BoundedInflater(coding, limit))
    return decoders


def parse_retry_after(value: str | None, now: dt.datetime) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date); None if unusable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return seconds if seconds >= 0 and seconds == seconds else None  # NaN != NaN
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - now).total_seconds())


def host_key(url: str) -> str:
    """``scheme://host[:port]`` in lower case: the unit of pacing and of robots.txt."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{(parts.netloc or '').lower()}"


def describe_transport_error(exc: httpx.TransportError) -> str:
    kinds: list[tuple[type[Exception], str]] = [
        (httpx.ConnectTimeout, "connect timeout"),
        (httpx.ReadTimeout, "read timeout"),
        (httpx.WriteTimeout, "write timeout"),
        (httpx.PoolTimeout, "connection pool timeout"),
        (httpx.ConnectError, "connection failed"),
        (httpx.RemoteProtocolError, "connection broke mid-response (truncated body?)"),
        (httpx.ReadError, "read error"),
        (httpx.ProxyError, "proxy error"),
    ]
    label = next((text for kind, text in kinds if isinstance(exc, kind)), type(exc).__name__)
    detail = str(exc).strip()
    return f"{label}: {detail}" if detail else label


@dataclass(frozen=True)
class BodyLimits:
    """How much of a body one attempt may read, and for how long."""

    max_bytes: int
    attempt_timeout: float


def read_body(
    response: httpx.Response, limits: BodyLimits, deadline: float, clock: Callable[[], float]
) -> bytes:
    """The decoded body, capped at ``limits.max_bytes`` before and after decompression."""
    limit = limits.max_bytes
    headers = response.headers
    decoders = _decoders(headers.get("content-encoding", ""), limit)
    declared: int | None = None
    if headers.get("content-length", "").strip().isdigit():
        declared = int(headers["content-length"])
        if declared > limit and not decoders:
            raise Fatal(f"body of {declared} bytes is over the {limit}-byte cap")
    raw_seen = 0
    out = bytearray()
    # The stream itself, not iter_raw(): a transport that hands back an already-read response
    # (httpx.MockTransport, some test doubles) still yields its raw bytes this way.
    for chunk in response.stream:  # type: ignore[union-attr]
        raw_seen += len(chunk)
        if raw_seen > limit:  # compressed bigger than the cap means decoded bigger still
            raise Fatal(f"body is over the {limit}-byte cap")
        for decoder in decoders:
            chunk = decoder.feed(chunk)
        out += chunk
        if len(out) > limit:
            raise Fatal(f"body is over the {limit}-byte cap")
        if clock() > deadline:
            raise Retryable(f"body took longer than {limits.attempt_timeout:.0f} s")
    for decoder in decoders:
        decoder.finish()
    if declared is not None and raw_seen < declared:
        raise Retryable(f"truncated body: {raw_seen} of {declared} bytes")
    return bytes(out)


def exchange_once(
    client: httpx.Client,
    method: str,
    url: str,
    headers: dict[str, str],
    content: bytes | None,
    *,
    limits: BodyLimits,
    clock: Callable[[], float],
    now: Callable[[], dt.datetime],
) -> Exchange:
    """One request and its response; Retryable or Fatal when it is not a usable answer."""
    deadline = clock() + limits.attempt_timeout
    try:
        with client.stream(method, url, headers=headers, content=content) as response:
            status = response.status_code
            exchange_headers = {k.lower(): v for k, v in response.headers.items()}
            if status in RETRY_STATUSES:
                retry_after = parse_retry_after(response.headers.get("retry-after"), now())
                raise Retryable(
                    f"HTTP {status} {response.reason_phrase}".strip(), status=status, retry_after=retry_after
                )
            body = (
                b""
                if status in REDIRECT_STATUSES or status == 304
                else read_body(response, limits, deadline, clock)
            )
            return Exchange(
                url=url, status=status, reason=response.reason_phrase, headers=exchange_headers, body=body
            )
    except httpx.TransportError as exc:
        raise Retryable(describe_transport_error(exc)) from None
