"""How the fetcher fails: server errors past the retry budget, broken connections, truncated,
empty, oversized and bomb bodies, redirect loops. Every failure is a one-line FetchError naming
the provider and the cause; nothing sleeps for real and nothing touches the network."""

from __future__ import annotations

import datetime as dt
import gzip
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from gpuprice.scrapers.collect import collect_page
from gpuprice.scrapers.fetch import FetchError, FetchSettings, PoliteFetcher
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.rawstore import read_raw

URL = "https://prices.example/pricing"
TODAY = dt.date(2026, 10, 12)
MB = 1024 * 1024


class Clock:
    def __init__(self) -> None:
        self.t = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds


class ChunkStream(httpx.SyncByteStream):
    """A body arriving in chunks, optionally breaking off with an exception (like a socket)."""

    def __init__(self, chunks: list[bytes], error: Exception | None = None) -> None:
        self.chunks = chunks
        self.error = error

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks
        if self.error is not None:
            raise self.error


def streamed(
    status: int, chunks: list[bytes], headers: dict[str, str] | None = None, error: Exception | None = None
) -> httpx.Response:
    """A response as a real transport hands it over: a stream, not pre-read content."""
    return httpx.Response(status, headers=headers or {}, stream=ChunkStream(chunks, error))


Handler = Callable[[httpx.Request], httpx.Response]


def page_handler(*answers: httpx.Response | Handler | Exception) -> tuple[Handler, list[httpx.Request]]:
    """robots.txt is missing (404); the page answers in turn (the last answer repeats)."""
    seen: list[httpx.Request] = []
    queue = list(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/robots.txt":
            return httpx.Response(404)
        seen.append(request)
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, Exception):
            raise answer
        return answer(request) if callable(answer) else answer

    return handler, seen


def fetcher_for(handler: Handler, clock: Clock | None = None, **settings) -> PoliteFetcher:
    clock = clock or Clock()
    return PoliteFetcher(
        FetchSettings(user_agent="gpuprice/0.1 (+https://github.com/gpuprice/gpuprice)", **settings),
        transport=httpx.MockTransport(handler),
        sleep=clock.sleep,
        clock=clock,
        env={},
    )


def fetch(handler: Handler, provider: str = "crusoe", **settings):
    with fetcher_for(handler, **settings) as fetcher:
        return fetcher.fetch(provider, PageRequest(url=URL))


def one_line(error: FetchError) -> str:
    text = str(error)
    assert "\n" not in text
    return text


# --- server errors and broken connections ---------------------------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_past_the_retry_budget(status: int) -> None:
    handler, seen = page_handler(httpx.Response(status))
    clock = Clock()
    with pytest.raises(FetchError) as info, fetcher_for(handler, clock, max_attempts=3) as fetcher:
        fetcher.fetch("nebius", PageRequest(url=URL))
    text = one_line(info.value)
    assert text.startswith("nebius: ")
    assert f"HTTP {status}" in text and "after 3 attempts" in text
    assert info.value.status == status and info.value.provider == "nebius"
    assert len(seen) == 3


def test_client_errors_are_not_retried() -> None:
    handler, seen = page_handler(httpx.Response(403, text="Forbidden"))
    with pytest.raises(FetchError, match="HTTP 403") as info:
        fetch(handler)
    assert len(seen) == 1 and info.value.status == 403


def test_connection_refused() -> None:
    handler, seen = page_handler(httpx.ConnectError("[Errno 111] Connection refused"))
    with pytest.raises(
        FetchError, match=r"crusoe: .*connection failed: \[Errno 111\] Connection refused after 2"
    ):
        fetch(handler, max_attempts=2)
    assert len(seen) == 2


def test_read_timeout_then_success() -> None:
    handler, seen = page_handler(httpx.ReadTimeout("timed out"), httpx.Response(200, text="<p>ok</p>"))
    assert fetch(handler).body == b"<p>ok</p>"
    assert len(seen) == 2


def test_read_timeout_every_time() -> None:
    handler, _ = page_handler(httpx.ReadTimeout("timed out"))
    with pytest.raises(FetchError, match="read timeout"):
        fetch(handler, max_attempts=2)


def test_truncated_body_is_retried_and_reported() -> None:
    broken = streamed(
        200,
        [b"<html><table>"],
        error=httpx.RemoteProtocolError("peer closed connection without sending complete message body"),
    )
    handler, seen = page_handler(broken)
    with pytest.raises(FetchError, match="truncated body") as info:
        fetch(handler, max_attempts=2)
    assert len(seen) == 2
    one_line(info.value)


def test_short_body_against_content_length_is_truncated() -> None:
    short = lambda _r: streamed(200, [b"<html>"], headers={"Content-Length": "5000"})  # noqa: E731
    whole = httpx.Response(200, content=b"<html>all of it</html>")
    handler, seen = page_handler(short, whole)
    assert fetch(handler).body == b"<html>all of it</html>"
    assert len(seen) == 2


def test_a_trickling_server_hits_the_attempt_deadline() -> None:
    clock = Clock()

    class Trickle(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            for _ in range(100):
                clock.t += 10  # ten seconds per byte
                yield b"x"

    handler, _ = page_handler(lambda _r: httpx.Response(200, stream=Trickle()))
    with (
        pytest.raises(FetchError, match="longer than 60 s"),
        fetcher_for(handler, clock, attempt_timeout=60, max_attempts=1) as f,
    ):
        f.fetch("crusoe", PageRequest(url=URL))


# --- bodies --------------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [b"", b"  \r\n\t "])
def test_empty_200_is_an_error(body: bytes) -> None:
    handler, _ = page_handler(httpx.Response(200, content=body))
    with pytest.raises(FetchError, match=r"crusoe: cannot fetch .*: empty body \(HTTP 200\)"):
        fetch(handler)


def test_login_or_captcha_page_is_fetched_for_the_parser_to_reject() -> None:
    captcha = b"<html><title>Just a moment...</title><form id='challenge-form'>captcha</form></html>"
    handler, _ = page_handler(httpx.Response(200, content=captcha, headers={"Content-Type": "text/html"}))
    page = fetch(handler)
    assert page.body == captcha and page.status == 200 and page.content_type == "text/html"


def test_redirect_loop() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/robots.txt":
            return httpx.Response(404)
        target = "/b" if request.url.path in ("/pricing", "/a") else "/a"
        return httpx.Response(302, headers={"Location": target})

    with pytest.raises(FetchError, match=r"redirect loop: .*/pricing -> .*/b -> .*/a -> .*/b$") as info:
        fetch(handler)
    one_line(info.value)


def test_too_many_redirects() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/robots.txt":
            return httpx.Response(404)
        hop = int(request.url.params.get("hop", "0"))
        return httpx.Response(301, headers={"Location": f"/pricing?hop={hop + 1}"})

    with pytest.raises(FetchError, match="more than 3 redirects"):
        fetch(handler, max_redirects=3)


def test_redirect_without_location() -> None:
    handler, _ = page_handler(httpx.Response(302))
    with pytest.raises(FetchError, match="without a Location"):
        fetch(handler)


def test_oversized_body_declared_and_undeclared() -> None:
    declared, seen = page_handler(httpx.Response(200, content=b"x" * (MB + 1)))
    with pytest.raises(FetchError, match="over the 1048576-byte cap"):
        fetch(declared, max_bytes=MB)
    assert len(seen) == 1  # too large is not worth retrying
    chunks = [b"y" * 65536] * 40  # 2.5 MB, chunked, no Content-Length
    undeclared, _ = page_handler(lambda _r: streamed(200, chunks))
    with pytest.raises(FetchError, match="over the 1048576-byte cap"):
        fetch(undeclared, max_bytes=MB)


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """50 MB of zeros, gzipped to about 50 KB."""
    return gzip.compress(bytes(50 * MB), compresslevel=9, mtime=0)


def test_gzip_bomb_is_stopped_at_the_cap(gzip_bomb: bytes) -> None:
    assert len(gzip_bomb) < 100_000
    chunks = [gzip_bomb[i : i + 16384] for i in range(0, len(gzip_bomb), 16384)]
    handler, seen = page_handler(
        lambda _r: streamed(
            200, chunks, headers={"Content-Encoding": "gzip", "Content-Length": str(len(gzip_bomb))}
        )
    )
    with pytest.raises(FetchError, match=r"inflates past the 5242880-byte cap") as info:
        fetch(handler, max_bytes=5 * MB)
    assert len(seen) == 1
    one_line(info.value)


def test_compressed_bodies_are_decoded_in_their_real_world_forms() -> None:
    page = b"<html>" + b"<tr><td>H100</td><td>$2.49</td></tr>" * 500 + b"</html>"
    zlib_wrapped = zlib.compress(page)
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    raw_deflate = raw.compress(page) + raw.flush()
    two_members = gzip.compress(page[:1000], mtime=0) + gzip.compress(page[1000:], mtime=0)
    cases = [
        ("gzip", gzip.compress(page)),
        ("deflate", zlib_wrapped),
        ("deflate", raw_deflate),
        ("gzip", two_members),
        ("identity", page),
        ("GZIP", gzip.compress(page)),
    ]
    for encoding, data in cases:
        chunks = [data[i : i + 777] for i in range(0, len(data), 777)]
        handler, _ = page_handler(
            lambda _r, c=chunks, e=encoding: streamed(200, c, headers={"Content-Encoding": e})
        )
        assert fetch(handler).body == page, encoding


def test_truncated_and_corrupt_gzip() -> None:
    data = gzip.compress(b"<html>" + b"p" * 100_000 + b"</html>")
    cut, _ = page_handler(
        lambda _r: streamed(200, [data[: len(data) // 2]], headers={"Content-Encoding": "gzip"})
    )
    with pytest.raises(FetchError, match="truncated gzip body"):
        fetch(cut, max_attempts=2)
    garbage, seen = page_handler(
        lambda _r: streamed(200, [b"this is not gzip"], headers={"Content-Encoding": "gzip"})
    )
    with pytest.raises(FetchError, match="corrupt gzip body"):
        fetch(garbage)
    assert len(seen) == 1


def test_unsupported_content_encoding() -> None:
    handler, _ = page_handler(lambda _r: streamed(200, [b"\x8b\x00"], headers={"Content-Encoding": "br"}))
    with pytest.raises(FetchError, match="unsupported Content-Encoding 'br'"):
        fetch(handler)


def test_invalid_utf8_is_stored_byte_exact(tmp_path: Path) -> None:
    body = b"<html><td>H100 \xff\xfe caf\xe9 \xc3\x28</td><td>$2.49</td></html>"
    handler, _ = page_handler(
        httpx.Response(200, content=body, headers={"Content-Type": "text/html; charset=utf-8"})
    )
    with fetcher_for(handler) as fetcher:
        page = collect_page(
            "crusoe",
            TODAY,
            source="live",
            home=tmp_path,
            fetcher=fetcher,
            today=TODAY,
            requests=[PageRequest(url=URL)],
        )
    assert page.body == body
    assert read_raw(page.raw.stored_path) == body
    assert page.raw.bytes == len(body)


def test_non_http_urls_are_refused() -> None:
    handler, seen = page_handler(httpx.Response(200, content=b"x"))
    with fetcher_for(handler) as fetcher, pytest.raises(FetchError, match="not an http"):
        fetcher.fetch("crusoe", PageRequest(url="file:///etc/passwd"))
    assert seen == []
