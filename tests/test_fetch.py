"""PoliteFetcher: identification, robots.txt, pacing, retries, conditional requests, secrets;
and live collection (fallbacks, date refusal, storing every body). No network, no real sleeps."""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from gpuprice.scrapers.collect import collect_page, iter_live_pages
from gpuprice.scrapers.fetch import FetchError, FetchSettings, PoliteFetcher, RobotsDisallowed
from gpuprice.scrapers.http_exchange import parse_retry_after
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.rawstore import load_validators, lookup_validators, read_raw, store_raw
from gpuprice.scrapers.robots import parse_robots
from gpuprice.scrapers.user_agent import default_user_agent

NOW = dt.datetime(2026, 10, 12, 6, 0, tzinfo=dt.UTC)
TODAY = NOW.date()
PAGE = b"<html><table><tr><td>H100</td><td>$2.49</td></tr></table></html>"


class FakeTime:
    """A monotonic clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds


class Site:
    """A scripted web: routes answer by (host, path); every request is recorded."""

    def __init__(self, robots: dict[str, httpx.Response | str] | None = None) -> None:
        self.routes: dict[tuple[str, str], list[Callable[[httpx.Request], httpx.Response]]] = {}
        self.robots = robots or {}
        self.requests: list[httpx.Request] = []

    def on(self, url: str, *responses: httpx.Response | Callable[[httpx.Request], httpx.Response]) -> None:
        parts = httpx.URL(url)
        self.routes[(parts.host, parts.path)] = [
            r if callable(r) else (lambda _req, r=r: r)
            for r in responses  # type: ignore[misc]
        ]

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path == "/robots.txt":
            robots = self.robots.get(request.url.host)
            if robots is None:
                return httpx.Response(404)
            return robots if isinstance(robots, httpx.Response) else httpx.Response(200, text=robots)
        queue = self.routes.get((request.url.host, request.url.path))
        if not queue:
            return httpx.Response(404, text="not found")
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        return answer(request)

    def hits(self, path: str) -> list[httpx.Request]:
        return [r for r in self.requests if r.url.path == path]


def make_fetcher(
    site: Site, time_: FakeTime | None = None, env: dict[str, str] | None = None, **settings
) -> PoliteFetcher:
    time_ = time_ or FakeTime()
    return PoliteFetcher(
        FetchSettings(user_agent=settings.pop("user_agent", default_user_agent({})), **settings),
        transport=httpx.MockTransport(site.handler),
        sleep=time_.sleep,
        clock=time_.clock,
        now=lambda: NOW,
        env=env or {},
    )


def html_request(url: str = "https://example.com/pricing", **kw) -> PageRequest:
    return PageRequest(url=url, kind="html", **kw)


# --- identification ---------------------------------------------------------------------------


def test_default_user_agent_names_us_and_a_contact() -> None:
    agent = default_user_agent({})
    assert agent.startswith("gpuprice/")
    assert "(+https://github.com/gpuprice/gpuprice; price tracking for LLM training planning)" in agent


def test_user_agent_environment_overrides() -> None:
    assert "(+mailto:ops@example.org;" in default_user_agent({"GPUPRICE_CONTACT": "mailto:ops@example.org"})
    assert (
        default_user_agent({"GPUPRICE_USER_AGENT": "acme-bot/2 (+https://acme.test)"})
        == "acme-bot/2 (+https://acme.test)"
    )
    with pytest.raises(ValueError, match="one line"):
        default_user_agent({"GPUPRICE_USER_AGENT": "bot\r\nX-Evil: 1"})


def test_every_request_identifies_itself_and_asks_only_for_decodable_encodings() -> None:
    site = Site()
    site.on("https://example.com/pricing", httpx.Response(200, content=PAGE))
    with make_fetcher(site) as fetcher:
        page = fetcher.fetch(
            "lambda", html_request(headers={"User-Agent": "Mozilla/5.0", "Accept-Encoding": "br"})
        )
    assert page.body == PAGE and page.status == 200 and not page.not_modified
    for request in site.requests:  # robots.txt and the page
        assert request.headers["user-agent"].startswith("gpuprice/")
        assert request.headers["accept-encoding"] == "gzip, deflate"


# --- retries and pacing -------------------------------------------------------------------------


def test_429_then_200_waits_as_long_as_retry_after_says() -> None:
    site, clock = Site(), FakeTime()
    site.on(
        "https://example.com/pricing",
        httpx.Response(429, headers={"Retry-After": "7"}),
        httpx.Response(200, content=PAGE),
    )
    with make_fetcher(site, clock) as fetcher:
        page = fetcher.fetch("runpod", html_request())
    assert page.body == PAGE
    assert page.attempts == 2
    assert 7.0 in clock.sleeps
    assert len(site.hits("/pricing")) == 2


def test_retry_after_http_date_and_cap() -> None:
    later = "Mon, 12 Oct 2026 06:01:30 GMT"  # 90 s after NOW
    assert parse_retry_after(later, NOW) == pytest.approx(90.0)
    assert parse_retry_after("soon", NOW) is None
    assert parse_retry_after("-5", NOW) is None
    site, clock = Site(), FakeTime()
    site.on(
        "https://example.com/pricing",
        httpx.Response(503, headers={"Retry-After": "86400"}),
        httpx.Response(200, content=PAGE),
    )
    with make_fetcher(site, clock, retry_after_max=45.0) as fetcher:
        fetcher.fetch("runpod", html_request())
    assert clock.sleeps == [2.0, 45.0]  # robots.txt -> page spacing, then the capped Retry-After


def test_backoff_grows_exponentially_with_jitter() -> None:
    site, clock = Site(), FakeTime()
    site.on("https://example.com/pricing", httpx.Response(502))
    with make_fetcher(
        site, clock, max_attempts=4, backoff_base=2.0, backoff_max=60.0, min_host_interval=0
    ) as fetcher:
        with pytest.raises(FetchError):
            fetcher.fetch("crusoe", html_request())
    assert len(clock.sleeps) == 3
    for attempt, slept in enumerate(clock.sleeps, start=1):
        ceiling = 2.0 * 2 ** (attempt - 1)
        assert ceiling / 2 <= slept <= ceiling


def test_requests_to_one_host_are_spaced_out() -> None:
    site, clock = Site(), FakeTime()
    site.on("https://example.com/pricing", httpx.Response(200, content=PAGE))
    site.on("https://other.example.net/prices", httpx.Response(200, content=PAGE))
    with make_fetcher(site, clock, min_host_interval=3.0) as fetcher:
        fetcher.fetch("nebius", html_request())  # robots.txt then the page: one wait between
        assert clock.sleeps == [3.0]
        fetcher.fetch("nebius", html_request())
        assert clock.sleeps == [3.0, 3.0]
        fetcher.fetch("nebius", html_request("https://other.example.net/prices"))  # its own robots + wait
        assert clock.sleeps == [3.0, 3.0, 3.0]
        fetcher.fetch("nebius", html_request())  # 3 s have passed since example.com's last request
    assert clock.sleeps == [3.0, 3.0, 3.0]


# --- robots.txt --------------------------------------------------------------------------------


def test_robots_disallow_raises_and_never_requests_the_page() -> None:
    site = Site(robots={"example.com": "User-agent: *\nDisallow: /pricing\n"})
    site.on("https://example.com/pricing", httpx.Response(200, content=PAGE))
    with make_fetcher(site) as fetcher:
        with pytest.raises(
            RobotsDisallowed, match="robots.txt disallows https://example.com/pricing"
        ) as info:
            fetcher.fetch("coreweave", html_request())
        with pytest.raises(RobotsDisallowed):
            fetcher.fetch("coreweave", html_request())
    assert info.value.provider == "coreweave"
    assert str(info.value).startswith("coreweave: ")
    assert site.hits("/pricing") == []
    assert len(site.hits("/robots.txt")) == 1  # cached per host


def test_robots_group_for_our_token_beats_the_star_group() -> None:
    text = b"User-agent: *\nAllow: /\n\nUser-agent: GPUPrice\nDisallow: /pricing\n"
    policy = parse_robots(text, default_user_agent({}))
    assert not policy.allows("https://example.com/pricing")
    assert policy.allows("https://example.com/blog")
    assert parse_robots(text, "otherbot/1.0").allows("https://example.com/pricing")


def test_robots_longest_match_wildcards_and_anchor() -> None:
    text = (
        b"# comment\nUser-agent: *\nDisallow: /\nAllow: /pricing\nDisallow: /pricing/*.pdf$\n"
        b"Disallow: /*?session=\nCrawl-delay: 5\n"
    )
    policy = parse_robots(text, "gpuprice/0.1")
    assert policy.allows("https://x.test/pricing")
    assert policy.allows("https://x.test/pricing/gpus")
    assert not policy.allows("https://x.test/pricing/sheet.pdf")
    assert policy.allows("https://x.test/pricing/sheet.pdf.html")
    assert not policy.allows("https://x.test/pricing?session=1")
    assert not policy.allows("https://x.test/about")
    assert policy.allows("https://x.test/robots.txt")
    assert policy.crawl_delay == 5.0
    # Allow wins a tie; percent-encoding compares equal; an empty Disallow forbids nothing.
    assert parse_robots(b"User-agent: *\nDisallow: /a\nAllow: /a\n", "g").allows("https://x.test/a")
    assert not parse_robots(b"User-agent: *\nDisallow: /%7Eprices\n", "g").allows("https://x.test/~prices")
    assert parse_robots(b"User-agent: *\nDisallow:\n", "g").allows("https://x.test/anything")


def test_robots_missing_allows_and_unreachable_denies() -> None:
    site = Site(robots={"down.example": httpx.Response(503), "gone.example": httpx.Response(410)})
    site.on("https://down.example/pricing", httpx.Response(200, content=PAGE))
    site.on("https://gone.example/pricing", httpx.Response(200, content=PAGE))
    with make_fetcher(site, max_attempts=2) as fetcher:
        assert fetcher.fetch("nebius", html_request("https://gone.example/pricing")).body == PAGE
        with pytest.raises(RobotsDisallowed, match="robots.txt unreachable"):
            fetcher.fetch("nebius", html_request("https://down.example/pricing"))
    assert site.hits("/pricing") and all(r.url.host == "gone.example" for r in site.hits("/pricing"))


def test_crawl_delay_slows_us_down() -> None:
    site, clock = Site(robots={"example.com": "User-agent: *\nCrawl-delay: 10\n"}), FakeTime()
    site.on("https://example.com/pricing", httpx.Response(200, content=PAGE))
    with make_fetcher(site, clock, min_host_interval=1.0) as fetcher:
        fetcher.fetch("lambda", html_request())
    assert clock.sleeps == [10.0]


def test_redirect_to_another_host_checks_its_robots() -> None:
    site = Site(robots={"lambda.ai": "User-agent: *\nDisallow: /instances\n"})
    site.on(
        "https://lambdalabs.com/pricing",
        httpx.Response(301, headers={"Location": "https://lambda.ai/pricing"}),
    )
    site.on(
        "https://lambdalabs.com/old", httpx.Response(302, headers={"Location": "https://lambda.ai/instances"})
    )
    site.on("https://lambda.ai/pricing", httpx.Response(200, content=PAGE))
    with make_fetcher(site) as fetcher:
        page = fetcher.fetch("lambda", html_request("https://lambdalabs.com/pricing"))
        assert page.final_url == "https://lambda.ai/pricing" and page.url == "https://lambdalabs.com/pricing"
        with pytest.raises(RobotsDisallowed):
            fetcher.fetch("lambda", html_request("https://lambdalabs.com/old"))


# --- conditional requests -------------------------------------------------------------------------


def test_304_reuses_the_stored_page(tmp_path: Path) -> None:
    site = Site()
    etag, modified = '"v1"', "Sun, 11 Oct 2026 00:00:00 GMT"
    site.on(
        "https://example.com/pricing",
        httpx.Response(200, content=PAGE, headers={"ETag": etag, "Last-Modified": modified}),
        httpx.Response(304, headers={"ETag": etag}),
    )
    request = html_request()
    with make_fetcher(site) as fetcher:
        first = collect_page(
            "lambda",
            TODAY - dt.timedelta(days=1),
            source="live",
            home=tmp_path,
            fetcher=fetcher,
            today=TODAY - dt.timedelta(days=1),
            requests=[request],
        )
        assert not first.not_modified and first.raw.etag == etag
        assert lookup_validators(tmp_path, "lambda", request.url).etag == etag
        second = collect_page(
            "lambda", TODAY, source="live", home=tmp_path, fetcher=fetcher, today=TODAY, requests=[request]
        )
    conditional = site.hits("/pricing")[1]
    assert conditional.headers["if-none-match"] == etag
    assert conditional.headers["if-modified-since"] == modified
    assert second.not_modified and second.body == PAGE
    assert second.raw.http_status == 304 and second.raw.snapshot_date == TODAY
    # The reused body is filed under today's date too, and the index now points there.
    assert f"/{TODAY.isoformat()}/" in second.raw.stored_path
    assert read_raw(second.raw.stored_path) == PAGE
    assert load_validators(tmp_path, "lambda")[request.url].stored_path == second.raw.stored_path


def test_304_with_a_lost_stored_copy_fetches_again(tmp_path: Path) -> None:
    stored = store_raw(tmp_path, "lambda", TODAY, "https://example.com/pricing", PAGE, etag='"v1"')
    from gpuprice.scrapers.rawstore import remember_validators

    cached = remember_validators(tmp_path, stored)
    Path(stored.stored_path).unlink()
    site = Site()
    site.on(
        "https://example.com/pricing",
        lambda req: (
            httpx.Response(304)
            if "if-none-match" in req.headers
            else httpx.Response(200, content=b"<p>new</p>")
        ),
    )
    with make_fetcher(site) as fetcher:
        page = fetcher.fetch("lambda", html_request(), cached=cached)
    assert page.body == b"<p>new</p>" and not page.not_modified


def test_304_without_a_conditional_request_is_an_error() -> None:
    site = Site()
    site.on("https://example.com/pricing", httpx.Response(304))
    with make_fetcher(site) as fetcher, pytest.raises(FetchError, match="304"):
        fetcher.fetch("lambda", html_request())


# --- API keys ----------------------------------------------------------------------------------------


SECRET = "rp_live_SECRET_1234567890"


def test_api_key_is_sent_as_a_header_but_never_logged_or_raised(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    site = Site()
    seen_auth: list[str | None] = []

    def graphql(request: httpx.Request) -> httpx.Response:
        seen_auth.append(request.headers.get("authorization"))
        assert json.loads(request.content) == {"query": "{ gpuTypes { id } }"}
        return httpx.Response(500, text=f"internal error for key {SECRET}")

    site.on("https://api.runpod.io/graphql", graphql)
    api = PageRequest(
        url="https://api.runpod.io/graphql",
        method="POST",
        json_body={"query": "{ gpuTypes { id } }"},
        kind="json",
    )
    env = {"GPUPRICE_RUNPOD_API_KEY": SECRET}
    with make_fetcher(site, env=env, max_attempts=2) as fetcher, pytest.raises(FetchError) as info:
        fetcher.fetch("runpod", api)
    assert seen_auth == [f"Bearer {SECRET}"] * 2
    assert "HTTP 500" in str(info.value)
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)
    assert SECRET not in caplog.text
    assert all(SECRET not in str(arg) for record in caplog.records for arg in (record.args or ()))


def test_api_key_stays_off_html_pages_and_other_hosts(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    site = Site()
    site.on(
        "https://api.runpod.io/graphql",
        httpx.Response(307, headers={"Location": f"https://elsewhere.example/graphql?api_key={SECRET}"}),
    )
    site.on(
        "https://elsewhere.example/graphql",
        lambda r: httpx.Response(200, json={"auth": r.headers.get("authorization")}),
    )
    site.on(
        "https://www.runpod.io/pricing",
        lambda r: httpx.Response(200, text=str(r.headers.get("authorization"))),
    )
    env = {"GPUPRICE_RUNPOD_API_KEY": SECRET}
    with make_fetcher(site, env=env) as fetcher:
        api = fetcher.fetch(
            "runpod",
            PageRequest(
                url="https://api.runpod.io/graphql", method="POST", json_body={"query": "{ x }"}, kind="json"
            ),
        )
        html = fetcher.fetch("runpod", html_request("https://www.runpod.io/pricing"))
    assert json.loads(api.body) == {"auth": None}
    assert html.body == b"None"
    assert SECRET not in caplog.text


# --- live collection ---------------------------------------------------------------------------------


def test_live_refuses_any_day_but_today(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot scrape the past"):
        collect_page(
            "runpod", "2026-10-01", source="live", home=tmp_path, today=TODAY, requests=[html_request()]
        )
    with pytest.raises(ValueError, match="cannot scrape the future"):
        collect_page(
            "runpod",
            TODAY + dt.timedelta(days=1),
            source="live",
            home=tmp_path,
            today=TODAY,
            requests=[html_request()],
        )
    assert not (tmp_path / "raw").exists()


def test_live_tries_primaries_then_fallbacks_and_stores_each_body(tmp_path: Path) -> None:
    site = Site()
    site.on("https://api.runpod.io/graphql", httpx.Response(200, json={"errors": [{"message": "bad query"}]}))
    site.on("https://www.runpod.io/pricing", httpx.Response(200, content=PAGE))
    requests = [
        html_request("https://www.runpod.io/pricing", fallback=True),
        PageRequest(
            url="https://api.runpod.io/graphql", method="POST", json_body={"query": "{ x }"}, kind="json"
        ),
    ]
    with make_fetcher(site) as fetcher:
        pages = iter_live_pages(
            "runpod", TODAY, home=tmp_path, fetcher=fetcher, today=TODAY, requests=requests
        )
        first = next(pages)
        assert first.kind == "json" and first.request.url.endswith("/graphql")
        assert site.hits("/pricing") == []  # fallback untouched until asked for
        second = next(pages)  # e.g. the JSON did not parse: the pipeline asks for the next page
        assert second.kind == "html" and second.body == PAGE
        with pytest.raises(StopIteration):
            next(pages)
    stored = sorted(p.name for p in (tmp_path / "raw" / "runpod" / TODAY.isoformat()).iterdir())
    assert stored == sorted([first.raw.sha256 + ".json.gz", second.raw.sha256 + ".html.gz"])
    assert read_raw(first.raw.stored_path) == first.body  # kept although it "failed to parse"


def test_live_falls_back_when_the_primary_fails_and_reports_all_failures(tmp_path: Path) -> None:
    site = Site()
    site.on("https://www.runpod.io/pricing", httpx.Response(200, content=PAGE))
    primary = html_request("https://api.runpod.io/missing")
    fallback = html_request("https://www.runpod.io/pricing", fallback=True)
    with make_fetcher(site) as fetcher:
        page = collect_page(
            "runpod",
            TODAY,
            source="live",
            home=tmp_path,
            fetcher=fetcher,
            today=TODAY,
            requests=[primary, fallback],
        )
        assert page.request == fallback and page.earlier_failures and "HTTP 404" in page.earlier_failures[0]
        assert page.raw.url == fallback.url and page.raw.http_status == 200 and page.raw.provider == "runpod"
        with pytest.raises(FetchError, match=r"runpod: .*all 2 requests failed: .*HTTP 404.*HTTP 404"):
            collect_page(
                "runpod",
                TODAY,
                source="live",
                home=tmp_path,
                fetcher=fetcher,
                today=TODAY,
                requests=[primary, html_request("https://www.runpod.io/gone", fallback=True)],
            )
