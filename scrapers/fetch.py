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

The parts: ``user_agent`` (who we say we are), ``request_headers`` (what a request sends),
``http_exchange`` (one exchange, its body capped), ``redirects`` (one hop's rules), ``redact``
(secrets out of messages), ``fetch_types`` (settings, errors, the fetched page); this module paces,
retries, reads robots.txt, follows redirects and answers a 304 from the raw store.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

import httpx

from gpuprice.scrapers.fetch_types import FetchedPage, FetchError, FetchSettings, RobotsDisallowed
from gpuprice.scrapers.http_exchange import (
    REDIRECT_STATUSES,
    BodyLimits,
    Exchange,
    Fatal,
    Retryable,
    exchange_once,
    host_key,
)
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.rawstore import RawStoreError, ValidatorEntry, read_raw
from gpuprice.scrapers.redact import guard_library_logs, redact_text, scrub_url
from gpuprice.scrapers.redirects import next_request
from gpuprice.scrapers.request_headers import outgoing
from gpuprice.scrapers.robots import ROBOTS_MAX_BYTES, RobotsPolicy, parse_robots
from gpuprice.scrapers.user_agent import api_key_env_var

__all__ = ["FetchError", "FetchSettings", "FetchedPage", "PoliteFetcher", "RobotsDisallowed"]

log = logging.getLogger("gpuprice.fetch")

_ROBOTS_UNREACHABLE = "robots.txt unreachable"


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
        self._limits = BodyLimits(
            max_bytes=self.settings.max_bytes, attempt_timeout=self.settings.attempt_timeout
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> PoliteFetcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- redaction ---------------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        return redact_text(text, self._secrets)

    def _error(
        self, cls: type[FetchError], provider: str, url: str, cause: str, **extra: int | None
    ) -> FetchError:
        return cls(provider, self._redact(scrub_url(url)), self._redact(cause), **extra)  # type: ignore[arg-type]

    def _log(self, level: int, message: str, *args: object) -> None:
        if log.isEnabledFor(level):
            log.log(level, "%s", self._redact(message % args if args else message))

    def _api_key(self, provider: str) -> str | None:
        key = (self._env.get(api_key_env_var(provider)) or "").strip()
        if key:
            with self._registry_lock:
                self._secrets.add(key)
                guard_library_logs(key)
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

    def _exchange_once(
        self, method: str, url: str, headers: dict[str, str], content: bytes | None
    ) -> Exchange:
        return exchange_once(
            self._client, method, url, headers, content, limits=self._limits, clock=self._clock, now=self._now
        )

    def _exchange(
        self, provider: str, method: str, url: str, headers: dict[str, str], content: bytes | None
    ) -> Exchange:
        """One request (redirects not followed), paced per host and retried when worth it."""
        host = host_key(url)
        attempts = self.settings.max_attempts
        for attempt in range(1, attempts + 1):
            with self._host_lock(host):
                self._wait_for_host(host)
                try:
                    exchange = self._exchange_once(method, url, headers, content)
                except Retryable as failure:
                    retry = failure
                else:
                    exchange.attempts = attempt
                    return exchange
                finally:
                    self._last_request[host] = self._clock()
            if attempt == attempts:
                raise Fatal(
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
                scrub_url(url),
                retry.cause,
                attempt,
                attempts - 1,
                delay,
            )
            self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- robots.txt ------------------------------------------------------------------------------

    def _robots_policy(self, provider: str, url: str) -> RobotsPolicy:
        host = host_key(url)
        cached = self._robots.get(host)
        if cached is not None:
            return cached
        robots_url = host + "/robots.txt"
        try:
            exchange = self._follow(provider, "GET", robots_url, {"Accept": "text/plain"}, None, robots=False)
        except Fatal as failure:
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
                cause = f"{policy.origin.split(';')[0]}, so {scrub_url(url)} is not fetched"
            else:
                reason = policy.origin if policy.disallow_all else "a rule for this path"
                cause = f"robots.txt disallows {scrub_url(url)} ({reason})"
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
    ) -> Exchange:
        """Exchange, following redirects by hand so each hop is paced and checked.

        Non-2xx/3xx/304 statuses raise ``Fatal`` with the status.
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
            hop_to = next_request(
                exchange,
                origin=origin,
                seen=seen,
                hop=hop,
                max_redirects=self.settings.max_redirects,
                method=method,
                headers=headers,
                content=content,
                secret_headers=secret_headers,
            )
            target = hop_to.url
            method, headers, content = hop_to.method, hop_to.headers, hop_to.content
            self._log(logging.INFO, "%s: %s redirects to %s", provider, scrub_url(url), scrub_url(target))
            seen.append(target)
            url = target
        exchange.attempts = attempts
        if not (200 <= exchange.status < 300 or exchange.status == 304):
            raise Fatal(f"HTTP {exchange.status} {exchange.reason}".strip(), exchange.status)
        return exchange

    # -- the public call -------------------------------------------------------------------------

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
        sent = outgoing(request, cached, self._api_key(provider))
        conditional = sent.conditional
        note = " (conditional)" if conditional else ""
        self._log(logging.INFO, "%s: %s %s%s", provider, request.method, scrub_url(url), note)
        try:
            exchange = self._follow(
                provider, request.method, url, sent.headers, sent.content, secret_headers=sent.secret_headers
            )
        except Fatal as failure:
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
                logging.INFO, "%s: %s not modified; reusing %s", provider, scrub_url(url), cached.stored_path
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
            scrub_url(page.final_url),
            page.status,
        )
        return page
