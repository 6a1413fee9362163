"""Getting one provider's page for one snapshot date, live or from the archive.

This is the single entry point the pipeline calls per provider and date. Whatever the source,
the body is written to the raw page store before anyone parses it, and the returned
:class:`CollectedPage` carries the ``raw_pages`` row describing it. Live pages are fetched here;
recorded ones are replayed by ``scrapers/collect_archive.py``.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuprice.scrapers.archive import SAMPLE_ARCHIVE
from gpuprice.scrapers.collect_archive import collect_archived
from gpuprice.scrapers.collected import CollectedPage, store_intact
from gpuprice.scrapers.fetch import FetchError, PoliteFetcher
from gpuprice.scrapers.multipage import DEFAULT_MAX_PAGES, PartFailure, fetch_combined
from gpuprice.scrapers.offer import Provider
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.rawstore import (
    check_date,
    check_provider,
    lookup_validators,
    remember_validators,
)
from gpuprice.scrapers.redact import redact_credentials
from gpuprice.sources import PAGE_SOURCES, PageSource

log = logging.getLogger("gpuprice.collect")


def _utc_today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def _check_live_date(snapshot_date: dt.date, today: dt.date) -> None:
    if snapshot_date < today:
        raise ValueError(
            f"cannot scrape the past: live prices exist only for today ({today.isoformat()} UTC), "
            f"not {snapshot_date.isoformat()}; replay recorded pages with --source archive"
        )
    if snapshot_date > today:
        raise ValueError(
            f"cannot scrape the future: live prices exist only for today ({today.isoformat()} UTC), "
            f"not {snapshot_date.isoformat()}"
        )


def _ordered(requests: Sequence[PageRequest]) -> list[PageRequest]:
    """Primary requests in their order, then the fallbacks in theirs."""
    return [r for r in requests if not r.fallback] + [r for r in requests if r.fallback]


def _groups(requests: Sequence[PageRequest]) -> list[list[PageRequest]]:
    """Single requests alone, consecutive ``combine`` parts together (one stored page)."""
    groups: list[list[PageRequest]] = []
    for request in requests:
        if request.combine and groups and groups[-1][-1].combine:
            groups[-1].append(request)
        else:
            groups.append([request])
    return groups


def _paging(provider: str) -> tuple[object | None, int]:
    """The provider's ``next_page_request`` hook (paged APIs) and its page cap."""
    from gpuprice.scrapers.registry import provider_parser

    parser = provider_parser(provider)
    return getattr(parser, "next_page_request", None), int(getattr(parser, "MAX_PAGES", DEFAULT_MAX_PAGES))


def _fetch_group(provider: str, group: list[PageRequest], fetcher: PoliteFetcher) -> tuple[bytes, int | None]:
    """A multi-request source fetched part by part into one combined document (its bytes and
    the first part's HTTP status); FetchError naming the failed parts."""
    next_page, max_pages = _paging(provider)

    def fetch_part(request: PageRequest) -> tuple[int, bytes]:
        try:
            page = fetcher.fetch(provider, request)
        except FetchError as exc:
            raise PartFailure(exc.cause) from None
        return page.status, page.body

    first = group[0].url
    # Messages name the first URL without its query (Azure's filter is hundreds of characters)
    # and the failed part only when it is another one.
    shown = first.split("?", 1)[0] + ("?..." if "?" in first else "")
    try:
        body, parts = fetch_combined(group, fetch_part, next_page=next_page, max_pages=max_pages)  # type: ignore[arg-type]
    except PartFailure as exc:
        cause = exc.cause if exc.url in ("", first) else f"{exc.url.split('?', 1)[0]}: {exc.cause}"
        raise FetchError(provider, shown, cause) from None
    for part in parts:
        if part.error is not None:
            log.warning("%s: %s: %s", provider, part.url, part.error)
    return body, next((part.status for part in parts if part.status is not None), None)


def _live_requests(provider: str) -> list[PageRequest]:
    from gpuprice.scrapers.registry import provider_parser  # parsers load only when scraping live

    return list(provider_parser(provider).live_requests())


@dataclass(frozen=True)
class _Destination:
    """Where a provider's live pages of one snapshot date are stored."""

    provider: Provider
    day: dt.date
    home: Path
    parser_version: str | None


def _collect_combined(
    to: _Destination, group: list[PageRequest], fetcher: PoliteFetcher, earlier: tuple[str, ...]
) -> CollectedPage:
    """A multi-request source fetched into one combined JSON page and stored; FetchError if not."""
    request = group[0]
    body, status = _fetch_group(to.provider, group, fetcher)
    raw = store_intact(
        to.home,
        to.provider,
        to.day,
        request.url,
        body,
        kind="json",
        http_status=status,
        fetched_at=dt.datetime.now(dt.UTC),
        parser_version=to.parser_version,
    )
    return CollectedPage(
        provider=to.provider,
        snapshot_date=to.day,
        source="live",
        kind="json",
        body=body,
        raw=raw,
        request=request,
        page_date=to.day,
        earlier_failures=earlier,
    )


def _collect_request(
    to: _Destination, request: PageRequest, fetcher: PoliteFetcher, earlier: tuple[str, ...]
) -> CollectedPage:
    """One request fetched (conditionally when the store has its validators) and stored; FetchError
    if not. Stored before anything parses it, so a page that later fails to parse is kept."""
    cached = lookup_validators(to.home, to.provider, request.url) if request.method == "GET" else None
    fetched = fetcher.fetch(to.provider, request, cached=cached)
    raw = store_intact(
        to.home,
        to.provider,
        to.day,
        request.url,
        fetched.body,
        kind=request.kind,
        http_status=fetched.status,
        etag=fetched.etag,
        last_modified=fetched.last_modified,
        fetched_at=fetched.fetched_at,
        parser_version=to.parser_version,
    )
    if request.method == "GET":
        remember_validators(to.home, raw, kind=request.kind)
    return CollectedPage(
        provider=to.provider,
        snapshot_date=to.day,
        source="live",
        kind=request.kind,
        body=fetched.body,
        raw=raw,
        request=request,
        not_modified=fetched.not_modified,
        page_date=to.day,
        earlier_failures=earlier,
    )


def _nothing_fetched(
    provider: str, ordered: Sequence[PageRequest], failures: Sequence[str], last_url: str, last_cause: str
) -> FetchError:
    """The error when no request brought a page: one source's own cause, or every failure."""
    first = redact_credentials(ordered[0].url)
    if len(_groups(ordered)) == 1:  # one request or one combined source: its own cause
        return FetchError(provider, redact_credentials(last_url or first), last_cause)
    summary = redact_credentials("; ".join(failures))
    return FetchError(provider, first, f"all {len(ordered)} requests failed: {summary}")


def iter_live_pages(
    provider: str,
    snapshot_date: dt.date | str,
    *,
    home: Path,
    fetcher: PoliteFetcher | None = None,
    today: dt.date | None = None,
    requests: Sequence[PageRequest] | None = None,
    parser_version: str | None = None,
) -> Generator[CollectedPage, None, None]:
    """Fetch and store the provider's pages one by one, yielding each body that arrived.

    Primary requests come first, then fallbacks. The generator is lazy, so a fallback is only
    fetched when every primary failed or the caller asks for more (because parsing the page it
    got failed). Raises
    FetchError naming every failure when nothing at all could be fetched.
    """
    provider = check_provider(provider)
    day = check_date(snapshot_date)
    _check_live_date(day, today or _utc_today())
    ordered = _ordered(requests if requests is not None else _live_requests(provider))
    if not ordered:
        raise FetchError(provider, "-", "the provider defines no live requests")
    to = _Destination(provider=provider, day=day, home=home, parser_version=parser_version)
    own_fetcher = fetcher is None
    active = fetcher or PoliteFetcher()
    failures: list[str] = []
    last_cause = ""
    last_url = ""
    yielded = False
    try:
        for group in _groups(ordered):
            combined = group[0].combine
            try:
                if combined:
                    page = _collect_combined(to, group, active, tuple(failures))
                else:
                    page = _collect_request(to, group[0], active, tuple(failures))
            except FetchError as exc:
                log.warning("%s", exc)
                failures.append(f"{exc.url}: {exc.cause}")
                last_cause = exc.cause
                if combined:  # a single request's failure leaves the URL to its first request
                    last_url = exc.url
                continue
            yielded = True
            yield page
    finally:
        if own_fetcher:
            active.close()
    if not yielded:
        raise _nothing_fetched(provider, ordered, failures, last_url, last_cause)


def collect_page(
    provider: str,
    snapshot_date: dt.date | str,
    *,
    source: PageSource,
    home: Path,
    archive_dir: Path = SAMPLE_ARCHIVE,
    fetcher: PoliteFetcher | None = None,
    today: dt.date | None = None,
    requests: Sequence[PageRequest] | None = None,
    parser_version: str | None = None,
) -> CollectedPage:
    """One provider's page for one snapshot date, stored in the raw store before it is returned.

    ``source="live"`` fetches today's page (ValueError for any other date) trying the
    provider's primary requests in order, then its fallbacks; FetchError when none arrived.
    ``source="archive"`` replays the latest recording at or before the date from ``archive_dir``
    (default: the bundled sample; the edge passes GPUPRICE_ARCHIVE); NoArchivedPage when there is none.
    ``requests`` overrides the provider module's ``live_requests()`` (tests, experiments).
    """
    if source == "archive":
        return collect_archived(
            provider, snapshot_date, home=home, archive_dir=archive_dir, parser_version=parser_version
        )
    if source != "live":
        raise ValueError(f"unknown source {source!r}; valid: {', '.join(PAGE_SOURCES)}")
    pages = iter_live_pages(
        provider,
        snapshot_date,
        home=home,
        fetcher=fetcher,
        today=today,
        requests=requests,
        parser_version=parser_version,
    )
    try:
        return next(pages)
    finally:
        pages.close()  # closes a fetcher made here
