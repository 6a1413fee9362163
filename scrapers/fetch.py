"""Polite live fetching of pricing pages.

What "polite" means here, and why:

- Every request names us: ``User-Agent: gpuprice/<version> (+<contact>; <purpose>)``, so a site
  owner can see who we are and reach us. ``GPUPRICE_USER_AGENT`` replaces the whole string,
  ``GPUPRICE_CONTACT`` only the contact URL.
- robots.txt is honoured (RFC 9309, see ``scrapers.robots``), fetched once per host and kept for
  the fetcher's lifetime (one run). A missing robots.txt (4xx) allows everything. When robots.txt
  cannot be fetched (5xx, 429, network error, even after retries) we treat the host as fully
  disallowed, as RFC 9309 section 2.3.1.3 asks: better no prices for a day than scraping a site
  whose rules we could not read.
- One request at a time per host, at least ``min_host_interval`` seconds apart (or the
  robots.txt Crawl-delay, capped).
- Retries only for 429, 5xx and transport errors, with exponential backoff and jitter, honouring
  ``Retry-After`` (seconds or an HTTP date), capped.
- Conditional requests (If-None-Match / If-Modified-Since) from the raw store's validators
  index: an unchanged page costs the site a 304 and we reuse the stored body.
- Bodies are read as a stream and capped, after decompression too (we decode gzip/deflate
  ourselves with bounded output), so neither a huge page nor a gzip bomb can fill memory.

API keys are optional and come only from environment variables (``GPUPRICE_<PROVIDER>_API_KEY``).
They are sent as an ``Authorization: Bearer`` header on API (JSON) requests to the request's own
host, dropped on a redirect to another host, never logged, never stored, and redacted from every
message and exception.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from importlib import metadata
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field

from gpuprice.scrapers.gunzip import MAX_PAGE_BYTES, CappedInflater, GunzipError
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.rawstore import RawStoreError, ValidatorEntry, read_raw
from gpuprice.scrapers.robots import ROBOTS_MAX_BYTES, RobotsPolicy, parse_robots

log = logging.getLogger("gpuprice.fetch")

DEFAULT_CONTACT = "https://github.com/gpuprice/gpuprice"
PURPOSE = "price tracking for LLM training planning"
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_SECRET_QUERY_KEYS = frozenset({"api_key", "apikey", "key", "token", "access_token", "auth", "secret"})
_REDACTED = "[redacted]"
_ROBOTS_UNREACHABLE = "robots.txt unreachable"


class _SecretFilter(logging.Filter):
    """Blanks known API keys in records of the HTTP libraries' loggers (httpx logs full URLs)."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            redacted = _redact_text(message, self.secrets)
            if redacted != message:
                record.msg, record.args = redacted, None
        return True


_LIBRARY_LOG_FILTER = _SecretFilter()
_LIBRARY_LOGGERS = (
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
)


def _redact_text(text: str, secrets: set[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, _REDACTED)
    return text


def _guard_library_logs(secret: str) -> None:
    _LIBRARY_LOG_FILTER.secrets.add(secret)
    for name in _LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if _LIBRARY_LOG_FILTER not in logger.filters:
            logger.addFilter(_LIBRARY_LOG_FILTER)


def _version() -> str:
    try:
        return metadata.version("gpuprice")
    except metadata.PackageNotFoundError:  # running from a source tree without install
        return "0.1"


def default_user_agent(env: Mapping[str, str] | None = None) -> str:
    """Our identifying User-Agent, honouring GPUPRICE_USER_AGENT and GPUPRICE_CONTACT."""
    env = os.environ if env is None else env
    agent = env.get("GPUPRICE_USER_AGENT", "").strip()
    if not agent:
        contact = env.get("GPUPRICE_CONTACT", "").strip() or DEFAULT_CONTACT
        agent = f"gpuprice/{_version()} (+{contact}; {PURPOSE})"
    if any(ch in agent for ch in "\r\n\x00"):
        raise ValueError("the User-Agent must be one line (check GPUPRICE_USER_AGENT / GPUPRICE_CONTACT)")
    return agent


def api_key_env_var(provider: str) -> str:
    """The environment variable that may hold a provider's API key: GPUPRICE_RUNPOD_API_KEY."""
    return f"GPUPRICE_{provider.upper()}_API_KEY"


class FetchSettings(BaseModel):
    """Knobs of the polite fetcher (defaults suit a daily scrape of six sites)."""

    model_config = ConfigDict(frozen=True)

    user_agent: str = Field(default_factory=default_user_agent)
    connect_timeout: float = Field(default=10.0, gt=0)
    read_timeout: float = Field(default=30.0, gt=0)
    # Wall-clock budget for one attempt including the whole body (a trickling server).
    attempt_timeout: float = Field(default=120.0, gt=0)
    # Pricing pages are at most a few MB (Nebius' Next.js page is the largest).
    max_bytes: int = Field(default=MAX_PAGE_BYTES, gt=0)
    max_attempts: int = Field(default=4, ge=1, le=10)
    backoff_base: float = Field(default=2.0, ge=0)
    backoff_max: float = Field(default=60.0, ge=0)
    retry_after_max: float = Field(default=300.0, ge=0)
    min_host_interval: float = Field(default=2.0, ge=0)
    crawl_delay_max: float = Field(default=60.0, ge=0)
    max_redirects: int = Field(default=5, ge=0, le=20)
    respect_robots: bool = True


class FetchError(RuntimeError):
    """A page could not be fetched. One line naming the provider, the URL and the cause."""

    def __init__(
        self,
        provider: str,
        url: str,
        cause: str,
        *,
        status: int | None = None,
        attempts: int = 0,
    ) -> None:
        self.provider = provider
        self.url = url
        self.cause = " ".join(str(cause).split())
        self.status = status
        self.attempts = attempts
        super().__init__(f"{provider}: cannot fetch {url}: {self.cause}")


class RobotsDisallowed(FetchError):
    """robots.txt forbids the URL (or could not be read, which counts as forbidding)."""


class FetchedPage(BaseModel):
    """A body as fetched (or, after a 304, as stored from an earlier fetch)."""

    provider: str
    url: str = Field(description="the URL asked for (the key of the validators index)")
    final_url: str = Field(description="where the body came from after redirects")
    status: int
    body: bytes
    etag: str | None = None
    last_modified: str | None = None
    content_type: str | None = None
    not_modified: bool = False
    attempts: int = 1
    fetched_at: dt.datetime


class _Exchange(BaseModel):
    """One HTTP exchange without following redirects."""

    url: str
    status: int
    reason: str = ""
    headers: dict[str, str]
    body: bytes = b""
    attempts: int = 1


class _Retryable(Exception):
    def __init__(self, cause: str, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.status = status
        self.retry_after = retry_after


class _Fatal(Exception):
    def __init__(self, cause: str, status: int | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.status = status


# ---------------------------------------------------------------------------------------------
# Bounded decoding of Content-Encoding
# ---------------------------------------------------------------------------------------------


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
                raise _Fatal(
                    f"body inflates past the {self.limit}-byte cap ({self.encoding} bomb?)"
                ) from None
            raise _Fatal(f"corrupt {self.encoding} body: {exc.detail}") from None

    def finish(self) -> None:
        try:
            self._inflater.finish()
        except GunzipError:
            raise _Retryable(f"truncated {self.encoding} body (the connection ended early)") from None


def _decoders(content_encoding: str, limit: int) -> list[_BoundedInflater]:
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    decoders: list[_BoundedInflater] = []
    for coding in reversed(codings):  # the last coding applied is undone first
        if coding == "identity":
            continue
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise _Fatal(f"unsupported Content-Encoding {coding!r} (we ask for gzip or deflate)")
        decoders.append(_BoundedInflater(coding, limit))
    return decoders


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------


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


def _host_key(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{(parts.netloc or '').lower()}"


def _scrub_url(url: str) -> str:
    """The URL with credential-looking query values and userinfo blanked, for messages."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1] if "@" in parts.netloc else parts.netloc
    if not parts.query:
        return urlunsplit((parts.scheme, netloc, parts.path, "", parts.fragment))
    pairs = [
        (k, _REDACTED if k.lower() in _SECRET_QUERY_KEYS else v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(pairs, safe="[]"), parts.fragment))


def _describe_transport_error(exc: httpx.TransportError) -> str:
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


# ---------------------------------------------------------------------------------------------
# The fetcher
# ---------------------------------------------------------------------------------------------


class PoliteFetcher:
    """Fetches pages politely (see the module docstring). Safe to share between threads.

    ``transport``, ``sleep``, ``clock``, ``now`` and ``rng`` are injectable so tests run
    instantly and deterministically; ``env`` supplies API keys (default ``os.environ``).
    """

    def __init__(
        self,
        settings: FetchSettings | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
        rng: random.Random | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings or FetchSettings()
        self._sleep = sleep
        self._clock = clock
        self._now = now
        self._rng = rng or random.Random()
        self._env = os.environ if env is None else env
        self._client = httpx.Client(
            transport=transport,
            timeout=httpx.Timeout(
                connect=self.settings.connect_timeout,
                read=self.settings.read_timeout,
                write=self.settings.read_timeout,
                pool=self.settings.connect_timeout,
            ),
            follow_redirects=False,
            headers={"User-Agent": self.settings.user_agent, "Accept-Encoding": "gzip, deflate"},
        )
        self._robots: dict[str, RobotsPolicy] = {}
        self._last_request: dict[str, float] = {}
        self._host_locks: dict[str, threading.Lock] = {}
        self._registry_lock = threading.Lock()
        self._secrets: set[str] = set()

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> PoliteFetcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- redaction ---------------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        return _redact_text(text, self._secrets)

    def _error(
        self, cls: type[FetchError], provider: str, url: str, cause: str, **extra: int | None
    ) -> FetchError:
        return cls(provider, self._redact(_scrub_url(url)), self._redact(cause), **extra)  # type: ignore[arg-type]

    def _log(self, level: int, message: str, *args: object) -> None:
        if log.isEnabledFor(level):
            log.log(level, "%s", self._redact(message % args if args else message))

    def _api_key(self, provider: str) -> str | None:
        key = (self._env.get(api_key_env_var(provider)) or "").strip()
        if key:
            with self._registry_lock:
                self._secrets.add(key)
                _guard_library_logs(key)
        return key or None

    # -- per-host pacing -----------------------------------------------------------------------

    def _host_lock(self, host: str) -> threading.Lock:
        with self._registry_lock:
            return self._host_locks.setdefault(host, threading.Lock())

    def _interval(self, host: str) -> float:
        policy = self._robots.get(host)
        crawl_delay = min(policy.crawl_delay or 0.0, self.settings.crawl_delay_max) if policy else 0.0
        return max(self.settings.min_host_interval, crawl_delay)

    def _wait_for_host(self, host: str) -> None:
        last = self._last_request.get(host)
        if last is None:
            return
        wait = last + self._interval(host) - self._clock()
        if wait > 0:
            self._log(logging.DEBUG, "waiting %.2f s before the next request to %s", wait, host)
            self._sleep(wait)

    def _backoff(self, attempt: int) -> float:
        # Exponential with "equal jitter": never zero, never in lockstep with other clients.
        ceiling = min(self.settings.backoff_max, self.settings.backoff_base * 2 ** (attempt - 1))
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    # -- one exchange ----------------------------------------------------------------------------

    def _read_body(self, response: httpx.Response, deadline: float) -> bytes:
        limit = self.settings.max_bytes
        headers = response.headers
        decoders = _decoders(headers.get("content-encoding", ""), limit)
        declared: int | None = None
        if headers.get("content-length", "").strip().isdigit():
            declared = int(headers["content-length"])
            if declared > limit and not decoders:
                raise _Fatal(f"body of {declared} bytes is over the {limit}-byte cap")
        raw_seen = 0
        out = bytearray()
        # The stream itself, not iter_raw(): a transport that hands back an already-read response
        # (httpx.MockTransport, some test doubles) still yields its raw bytes this way.
        for chunk in response.stream:  # type: ignore[union-attr]
            raw_seen += len(chunk)
            if raw_seen > limit:  # compressed bigger than the cap means decoded bigger still
                raise _Fatal(f"body is over the {limit}-byte cap")
            for decoder in decoders:
                chunk = decoder.feed(chunk)
            out += chunk
            if len(out) > limit:
                raise _Fatal(f"body is over the {limit}-byte cap")
            if self._clock() > deadline:
                raise _Retryable(f"body took longer than {self.settings.attempt_timeout:.0f} s")
        for decoder in decoders:
            decoder.finish()
        if declared is not None and raw_seen < declared:
            raise _Retryable(f"truncated body: {raw_seen} of {declared} bytes")
        return bytes(out)

    def _exchange_once(
        self, method: str, url: str, headers: dict[str, str], content: bytes | None
    ) -> _Exchange:
        deadline = self._clock() + self.settings.attempt_timeout
        try:
            with self._client.stream(method, url, headers=headers, content=content) as response:
                status = response.status_code
                exchange_headers = {k.lower(): v for k, v in response.headers.items()}
                if status in RETRY_STATUSES:
                    retry_after = parse_retry_after(response.headers.get("retry-after"), self._now())
                    raise _Retryable(
                        f"HTTP {status} {response.reason_phrase}".strip(),
                        status=status,
                        retry_after=retry_after,
                    )
                body = (
                    b""
                    if status in REDIRECT_STATUSES or status == 304
                    else self._read_body(response, deadline)
                )
                return _Exchange(
                    url=url, status=status, reason=response.reason_phrase, headers=exchange_headers, body=body
                )
        except httpx.TransportError as exc:
            raise _Retryable(_describe_transport_error(exc)) from None

    def _exchange(
        self, provider: str, method: str, url: str, headers: dict[str, str], content: bytes | None
    ) -> _Exchange:
        """One request (redirects not followed), paced per host and retried when worth it."""
        host = _host_key(url)
        attempts = self.settings.max_attempts
        for attempt in range(1, attempts + 1):
            with self._host_lock(host):
                self._wait_for_host(host)
                try:
                    exchange = self._exchange_once(method, url, headers, content)
                except _Retryable as failure:
                    retry = failure
                else:
                    exchange.attempts = attempt
                    return exchange
                finally:
                    self._last_request[host] = self._clock()
            if attempt == attempts:
                raise _Fatal(
                    f"{retry.cause} after {attempt} attempt{'s' if attempt > 1 else ''}", retry.status
                )
            delay = self._backoff(attempt)
            if retry.retry_after is not None:
                delay = min(retry.retry_after, self.settings.retry_after_max)
            self._log(
                logging.WARNING,
                "%s: %s %s: %s; retry %d/%d in %.1f s",
                provider,
                method,
                _scrub_url(url),
                retry.cause,
                attempt,
                attempts - 1,
                delay,
            )
            self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- robots.txt ------------------------------------------------------------------------------

    def _robots_policy(self, provider: str, url: str) -> RobotsPolicy:
        host = _host_key(url)
        cached = self._robots.get(host)
        if cached is not None:
            return cached
        robots_url = host + "/robots.txt"
        try:
            exchange = self._follow(provider, "GET", robots_url, {"Accept": "text/plain"}, None, robots=False)
        except _Fatal as failure:
            if failure.status is not None and 400 <= failure.status < 500 and failure.status != 429:
                policy = RobotsPolicy.allow_all(f"robots.txt missing (HTTP {failure.status})")
            else:
                policy = RobotsPolicy.deny_all(
                    f"{_ROBOTS_UNREACHABLE} ({failure.cause}); treated as disallow all"
                )
        else:
            policy = parse_robots(exchange.body[:ROBOTS_MAX_BYTES], self.settings.user_agent)
        self._log(logging.DEBUG, "robots.txt for %s: %s", host, policy.origin)
        self._robots[host] = policy
        return policy

    def _check_robots(self, provider: str, url: str) -> None:
        if not self.settings.respect_robots:
            return
        policy = self._robots_policy(provider, url)
        if not policy.allows(url):
            if policy.disallow_all and policy.origin.startswith(_ROBOTS_UNREACHABLE):
                # Usually the host itself is unreachable (offline, DNS): say that first.
                cause = f"{policy.origin.split(';')[0]}, so {_scrub_url(url)} is not fetched"
            else:
                reason = policy.origin if policy.disallow_all else "a rule for this path"
                cause = f"robots.txt disallows {_scrub_url(url)} ({reason})"
            raise self._error(RobotsDisallowed, provider, url, cause)

    # -- redirects -------------------------------------------------------------------------------

    def _follow(
        self,
        provider: str,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        *,
        robots: bool = True,
        secret_headers: frozenset[str] = frozenset(),
    ) -> _Exchange:
        """Exchange, following redirects by hand so each hop is paced and checked.

        Non-2xx/3xx/304 statuses raise ``_Fatal`` with the status.
        """
        origin = urlsplit(url)
        seen = [url]
        attempts = 0
        for hop in range(self.settings.max_redirects + 1):
            if robots:
                self._check_robots(provider, url)
            exchange = self._exchange(provider, method, url, headers, content)
            attempts += exchange.attempts
            if exchange.status not in REDIRECT_STATUSES:
                break
            location = exchange.headers.get("location", "").strip()
            if not location:
                raise _Fatal(f"HTTP {exchange.status} redirect without a Location header", exchange.status)
            target = urljoin(url, location)
            parts = urlsplit(target)
            if parts.scheme not in ("http", "https"):
                raise _Fatal(f"redirect to a non-HTTP URL {_scrub_url(target)}", exchange.status)
            if target in seen:
                chain = " -> ".join(_scrub_url(u) for u in [*seen, target])
                raise _Fatal(f"redirect loop: {chain}", exchange.status)
            if hop == self.settings.max_redirects:
                raise _Fatal(
                    f"more than {self.settings.max_redirects} redirects (last to {_scrub_url(target)})"
                )
            if (parts.scheme, parts.netloc.lower()) != (origin.scheme, origin.netloc.lower()):
                # Credentials and validators belong to the original host only.
                headers = {
                    k: v
                    for k, v in headers.items()
                    if k.lower() not in secret_headers
                    and k.lower() not in ("if-none-match", "if-modified-since")
                }
            if exchange.status in (301, 302, 303) and method == "POST":
                method, content = "GET", None  # what browsers do; 307/308 keep method and body
                headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
            self._log(logging.INFO, "%s: %s redirects to %s", provider, _scrub_url(url), _scrub_url(target))
            seen.append(target)
            url = target
        exchange.attempts = attempts
        if not (200 <= exchange.status < 300 or exchange.status == 304):
            raise _Fatal(f"HTTP {exchange.status} {exchange.reason}".strip(), exchange.status)
        return exchange

    # -- the public call -------------------------------------------------------------------------

    def _request_headers(
        self, provider: str, request: PageRequest, cached: ValidatorEntry | None
    ) -> tuple[dict[str, str], frozenset[str], bool]:
        """(headers, names of secret headers, whether the request is conditional)."""
        accept = (
            "application/json"
            if request.kind == "json"
            else "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"
        )
        headers: dict[str, str] = {"Accept": accept}
        for name, value in request.headers.items():
            # We always say who we are, and only accept encodings we can decode with a cap.
            if name.lower() not in ("user-agent", "accept-encoding"):
                headers[name] = value
        if request.method == "POST" and request.json_body is not None:
            headers["Content-Type"] = "application/json"
        secret: set[str] = set()
        key = self._api_key(provider)
        if key and request.kind == "json":  # API calls only: HTML pricing pages need no key
            headers["Authorization"] = f"Bearer {key}"
            secret.add("authorization")
        conditional = (
            cached is not None and request.method == "GET" and bool(cached.etag or cached.last_modified)
        )
        if conditional and cached is not None:
            if cached.etag:
                headers["If-None-Match"] = cached.etag
            if cached.last_modified:
                headers["If-Modified-Since"] = cached.last_modified
        return headers, frozenset(secret), conditional

    def fetch(
        self, provider: str, request: PageRequest, *, cached: ValidatorEntry | None = None
    ) -> FetchedPage:
        """Fetch one page request; raises FetchError (or RobotsDisallowed) with a one-line cause.

        ``cached`` (the validators index entry for ``request.url``) makes a GET conditional; a
        304 then returns the stored body with ``not_modified=True``.
        """
        url = request.url
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
            raise self._error(FetchError, provider, url, "not an http(s) URL")
        headers, secret_headers, conditional = self._request_headers(provider, request, cached)
        content = None
        if request.method == "POST" and request.json_body is not None:
            content = json.dumps(request.json_body, separators=(",", ":")).encode("utf-8")
        note = " (conditional)" if conditional else ""
        self._log(logging.INFO, "%s: %s %s%s", provider, request.method, _scrub_url(url), note)
        try:
            exchange = self._follow(
                provider, request.method, url, headers, content, secret_headers=secret_headers
            )
        except _Fatal as failure:
            raise self._error(FetchError, provider, url, failure.cause, status=failure.status) from None
        page = FetchedPage(
            provider=provider,
            url=url,
            final_url=exchange.url,
            status=exchange.status,
            body=exchange.body,
            etag=exchange.headers.get("etag"),
            last_modified=exchange.headers.get("last-modified"),
            content_type=exchange.headers.get("content-type"),
            attempts=exchange.attempts,
            fetched_at=self._now(),
        )
        if exchange.status == 304:
            if not conditional or cached is None:
                raise self._error(
                    FetchError, provider, url, "HTTP 304 to an unconditional request", status=304
                )
            try:
                body = read_raw(cached.stored_path)
            except (OSError, RawStoreError) as exc:
                self._log(
                    logging.WARNING, "%s: stored copy unusable (%s); fetching %s again", provider, exc, url
                )
                return self.fetch(provider, request, cached=None)
            self._log(
                logging.INFO, "%s: %s not modified; reusing %s", provider, _scrub_url(url), cached.stored_path
            )
            return page.model_copy(
                update={
                    "body": body,
                    "not_modified": True,
                    "etag": page.etag or cached.etag,
                    "last_modified": page.last_modified or cached.last_modified,
                    "content_type": None,
                }
            )
        if not page.body.strip():
            raise self._error(
                FetchError, provider, url, f"empty body (HTTP {page.status})", status=page.status
            )
        self._log(
            logging.INFO,
            "%s: got %d bytes from %s (HTTP %d)",
            provider,
            len(page.body),
            _scrub_url(page.final_url),
            page.status,
        )
        return page
