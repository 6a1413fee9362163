"""scrapers/days.py: a live page chosen once (primary, else fallback) and parsed once; a range's
distinct pages parsed once; every outcome typed."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import httpx
import pytest

from gpuprice.scrapers import days
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE, find_archived_page, read_archived
from gpuprice.scrapers.fetch import FetchSettings, PoliteFetcher
from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.providers import runpod

TODAY = dt.date(2026, 9, 1)
VERSION = runpod.PARSER_VERSION
# Runpod's recorded API answer and its recorded HTML pricing page (the sample archive's own).
API = read_archived(find_archived_page(SAMPLE_ARCHIVE, "runpod", "2026-08-30").path)
HTML = read_archived(find_archived_page(SAMPLE_ARCHIVE, "runpod", "2026-07-16").path)
MOVED = b'{"data": {"somethingElse": []}}'  # the API answers, its price list has moved
LOGIN = b"<html><body><h1>Sign in</h1><form><input name=password></form></body></html>"


def fetcher(api: bytes, html: bytes, seen: list[str]) -> PoliteFetcher:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/robots.txt":
            return httpx.Response(404)
        seen.append(request.url.host)
        return httpx.Response(200, content=api if request.url.host == "api.runpod.io" else html)

    return PoliteFetcher(
        FetchSettings(user_agent="gpuprice-test (test@example.com)"),
        transport=httpx.MockTransport(answer),
        sleep=lambda s: None,
    )


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every body Runpod's structured reader is handed."""
    seen: list[bytes] = []
    real = runpod.parse

    def counting(content: bytes, observed_on: dt.date | None = None):
        seen.append(content)
        return real(content, observed_on)

    monkeypatch.setattr(runpod, "parse", counting)
    return seen


def choose(tmp_path: Path, api: bytes, html: bytes, seen: list[str]) -> days.DayPage:
    with fetcher(api, html, seen) as active:
        return days.choose_live_page(
            "runpod", TODAY, home=tmp_path, parser_version=VERSION, fetcher=active, today=TODAY
        )


def test_a_primary_page_with_prices_is_chosen_and_the_fallback_never_fetched(tmp_path, parses):
    hosts: list[str] = []
    chosen = choose(tmp_path, API, HTML, hosts)
    assert hosts == ["api.runpod.io"]
    assert chosen.page.url.startswith("https://api.runpod.io") and len(chosen.stored) == 1
    assert not isinstance(chosen.parse, Exception) and chosen.parse is not None and chosen.parse.offers
    assert parses == [API]  # parsed once, while choosing
    parsed = days.parse_days("runpod", {TODAY: chosen})
    assert parses == [API]  # the choice's parse is the one used
    day = parsed.days[TODAY]
    assert isinstance(day, days.ParsedDay) and day.result is chosen.parse


def test_a_primary_without_price_structure_brings_the_fallback_page(tmp_path, parses):
    hosts: list[str] = []
    chosen = choose(tmp_path, MOVED, HTML, hosts)
    assert hosts == ["api.runpod.io", "www.runpod.io"]
    assert chosen.page.url.startswith("https://www.runpod.io") and len(chosen.stored) == 2
    assert parses == [MOVED, HTML]  # each body read once by the structured reader
    Path(chosen.page.stored_path).unlink()  # the stored copy is not read again
    day = days.parse_days("runpod", {TODAY: chosen}).days[TODAY]
    assert isinstance(day, days.ParsedDay) and day.result.report.parse_strategy == "structured"
    assert parses == [MOVED, HTML]


def test_nothing_with_price_structure_reports_on_the_primary_page(tmp_path, parses):
    chosen = choose(tmp_path, MOVED, LOGIN, [])
    assert chosen.page.url.startswith("https://api.runpod.io") and len(chosen.stored) == 2
    assert isinstance(chosen.parse, StructureMissing) and parses == [MOVED, LOGIN]
    day = days.parse_days("runpod", {TODAY: chosen}).days[TODAY]
    assert isinstance(day, days.DayFailure) and day.stage == "parse" and day.cause is None
    assert day.message.startswith("parse failed: runpod: no price structure found")


def test_a_range_parses_each_distinct_page_once_and_a_damaged_copy_fails_its_dates(tmp_path, parses):
    chosen = choose(tmp_path, API, HTML, [])
    later = [TODAY + dt.timedelta(days=n) for n in range(1, 4)]
    # Three more dates replaying the same stored page (as a backfill over an unchanged archive).
    pages = {d: days.DayPage(d, chosen.page, chosen.stored, TODAY, "archive") for d in later}
    parsed = days.parse_days("runpod", pages)
    assert parses == [API, API]  # once while choosing, once for the three dates
    results = [parsed.days[d] for d in later]
    assert all(isinstance(r, days.ParsedDay) for r in results) and parsed.distinct_pages == 1
    Path(chosen.page.stored_path).write_bytes(b"not gzip")
    damaged = days.parse_days("runpod", pages)
    assert [getattr(damaged.days[d], "stage", None) for d in later] == ["read"] * 3
    assert damaged.days[later[0]].message.startswith("stored page unreadable: ")  # type: ignore[union-attr]


def test_a_re_parse_without_a_kept_page_is_not_a_failure_to_record(tmp_path):
    found = days.collect_days(
        "runpod", [TODAY], "raw", home=tmp_path, archive_dir=SAMPLE_ARCHIVE, parser_version=VERSION
    )
    failure = found[TODAY]
    assert isinstance(failure, days.DayFailure) and failure.nothing_kept and failure.stage == "fetch"
    assert failure.message == f"fetch failed: no stored runpod page for {TODAY} in the raw store"
