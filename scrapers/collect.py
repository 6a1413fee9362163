"""Getting one provider's page for one snapshot date, live or from the archive.

This is the single entry point the pipeline calls per provider and date. Whatever the source,
the body is written to the raw page store before anyone parses it, and the returned
:class:`CollectedPage` carries the ``raw_pages`` row describing it.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Generator, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from gpuprice.scrapers.archive import (
    SAMPLE_ARCHIVE,
    ArchivedPage,
    archive_dates,
    archived_pages,
    find_archived_page,
    latest_at_or_before,
    read_archived,
)
from gpuprice.scrapers.fetch import FetchError, PoliteFetcher
from gpuprice.scrapers.gunzip import MAX_PAGE_BYTES
from gpuprice.scrapers.multipage import DEFAULT_MAX_PAGES, PartFailure, fetch_combined
from gpuprice.scrapers.offer import Provider
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.rawstore import (
    PageKind,
    RawPage,
    RawStoreError,
    check_date,
    check_provider,
    link_raw,
    lookup_validators,
    read_raw,
    remember_validators,
    store_raw,
)
from gpuprice.scrapers.redact import redact_credentials
from gpuprice.sources import PAGE_SOURCES, PageSource

log = logging.getLogger("gpuprice.collect")


class NoArchivedPage(FileNotFoundError):
    """The archive holds no page of this provider at or before the date."""

    def __init__(
        self, provider: str, snapshot_date: dt.date, archive_dir: Path, recorded: Sequence[dt.date]
    ) -> None:
        if not Path(archive_dir).is_dir():
            hint = "the archive folder does not exist"
        elif not recorded:
            hint = f"it has no {provider} recordings"
        else:
            hint = f"{provider} recordings start {recorded[0].isoformat()}"
        super().__init__(
            f"no archived {provider} page at or before {snapshot_date.isoformat()} in {archive_dir} ({hint})"
        )
        self.provider = provider
        self.snapshot_date = snapshot_date
        self.archive_dir = Path(archive_dir)


class CollectedPage(BaseModel):
    """A body ready for the parser, with the raw_pages row that records it."""

    model_config = ConfigDict(frozen=True)

    provider: Provider
    snapshot_date: dt.date
    source: PageSource
    kind: PageKind
    body: bytes
    raw: RawPage
    # Live: the request that produced the body. Archive: None.
    request: PageRequest | None = None
    not_modified: bool = False
    # The date of the page itself: the snapshot date when live, the recording's date in replay
    # (which may be earlier: "the latest page at or before D").
    page_date: dt.date
    archived_path: Path | None = None
    # Requests that failed before this one succeeded ("url: cause"), for the run log.
    earlier_failures: tuple[str, ...] = ()
    # Facts about how the page was chosen, for the parse report.
    notes: tuple[str, ...] = ()


def _store_intact(home: Path, provider: str, day: dt.date, url: str, body: bytes, **fields) -> RawPage:
    """store_raw, then read the copy back: a damaged file already stored under the same digest
    (store_raw leaves an existing file alone) is replaced, so one bad copy cannot fail every
    later run that fetches the same content."""
    raw = store_raw(home, provider, day, url, body, **fields)
    try:
        read_raw(raw.stored_path)
    except (OSError, RawStoreError) as exc:
        log.warning(
            "%s %s: stored copy %s is damaged (%s); storing it again", provider, day, raw.stored_path, exc
        )
        Path(raw.stored_path).unlink(missing_ok=True)
        raw = store_raw(home, provider, day, url, body, **fields)
    return raw


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
    own_fetcher = fetcher is None
    active = fetcher or PoliteFetcher()
    failures: list[str] = []
    last_cause = ""
    last_url = ""
    yielded = False
    try:
        for group in _groups(ordered):
            request = group[0]
            if request.combine:
                try:
                    body, status = _fetch_group(provider, group, active)
                except FetchError as exc:
                    log.warning("%s", exc)
                    failures.append(f"{exc.url}: {exc.cause}")
                    last_cause, last_url = exc.cause, exc.url
                    continue
                raw = _store_intact(
                    home,
                    provider,
                    day,
                    request.url,
                    body,
                    kind="json",
                    http_status=status,
                    fetched_at=dt.datetime.now(dt.UTC),
                    parser_version=parser_version,
                )
                yielded = True
                yield CollectedPage(
                    provider=provider,
                    snapshot_date=day,
                    source="live",
                    kind="json",
                    body=body,
                    raw=raw,
                    request=request,
                    page_date=day,
                    earlier_failures=tuple(failures),
                )
                continue
            cached = lookup_validators(home, provider, request.url) if request.method == "GET" else None
            try:
                fetched = active.fetch(provider, request, cached=cached)
            except FetchError as exc:
                log.warning("%s", exc)
                failures.append(f"{exc.url}: {exc.cause}")
                last_cause = exc.cause
                continue
            # Stored before anything parses it, so a page that later fails to parse is kept.
            raw = _store_intact(
                home,
                provider,
                day,
                request.url,
                fetched.body,
                kind=request.kind,
                http_status=fetched.status,
                etag=fetched.etag,
                last_modified=fetched.last_modified,
                fetched_at=fetched.fetched_at,
                parser_version=parser_version,
            )
            if request.method == "GET":
                remember_validators(home, raw, kind=request.kind)
            yielded = True
            yield CollectedPage(
                provider=provider,
                snapshot_date=day,
                source="live",
                kind=request.kind,
                body=fetched.body,
                raw=raw,
                request=request,
                not_modified=fetched.not_modified,
                page_date=day,
                earlier_failures=tuple(failures),
            )
    finally:
        if own_fetcher:
            active.close()
    if not yielded:
        first = redact_credentials(ordered[0].url)
        if len(_groups(ordered)) == 1:  # one request or one combined source: its own cause
            raise FetchError(provider, redact_credentials(last_url or first), last_cause)
        summary = redact_credentials("; ".join(failures))
        raise FetchError(provider, first, f"all {len(ordered)} requests failed: {summary}")


def collect_archived(
    provider: str,
    snapshot_date: dt.date | str,
    *,
    home: Path,
    archive_dir: Path = SAMPLE_ARCHIVE,
    parser_version: str | None = None,
    max_bytes: int = MAX_PAGE_BYTES,
) -> CollectedPage:
    """Replay the latest recorded page at or before the date, storing it in the raw store."""
    provider = check_provider(provider)
    day = check_date(snapshot_date)
    page = find_archived_page(archive_dir, provider, day)
    if page is None:
        raise NoArchivedPage(provider, day, archive_dir, archive_dates(archive_dir).get(provider, []))
    body = read_archived(page.path, max_bytes)
    raw = _store_intact(
        home,
        provider,
        day,
        f"archive://{provider}/{page.file_name}",
        body,
        kind=page.kind,
        http_status=None,
        fetched_at=dt.datetime.now(dt.UTC),
        parser_version=parser_version,
    )
    if page.page_date != day:
        log.info("%s %s: replaying the recording of %s", provider, day, page.page_date)
    return CollectedPage(
        provider=provider,
        snapshot_date=day,
        source="archive",
        kind=page.kind,
        body=body,
        raw=raw,
        page_date=page.page_date,
        archived_path=page.path,
        notes=_twin_notes(page),
    )


def _twin_notes(page: ArchivedPage) -> tuple[str, ...]:
    """The parse-report note when one date has several recordings (which one was replayed, why)."""
    if not page.also_recorded:
        return ()
    return (
        f"archive: replayed {page.file_name}, not {', '.join(page.also_recorded)} recorded for the same "
        "date (a .json API recording is preferred to an .html page, a plain file to its .gz)",
    )


def collect_archived_range(
    provider: str,
    dates: Sequence[dt.date],
    *,
    home: Path,
    archive_dir: Path,
    parser_version: str | None = None,
    max_bytes: int = MAX_PAGE_BYTES,
) -> dict[dt.date, CollectedPage | Exception]:
    """``collect_archived`` for many dates at once (a backfill): per date the page or why not.

    Each recording is read, hashed and compressed once; the other dates that replay it get a
    link to the same stored copy (``link_raw``), so a year of one unchanged page costs one read.
    """
    provider = check_provider(provider)
    recordings = archived_pages(archive_dir, provider)
    seen: dict[Path, tuple[bytes, RawPage]] = {}
    collected: dict[dt.date, CollectedPage | Exception] = {}
    for day in dates:
        page = latest_at_or_before(recordings, day)
        if page is None:
            recorded = sorted({p.page_date for p in recordings})
            collected[day] = NoArchivedPage(provider, day, archive_dir, recorded)
            continue
        now = dt.datetime.now(dt.UTC)
        try:
            if page.path in seen:
                body, first = seen[page.path]
                raw = link_raw(home, first, day, fetched_at=now, parser_version=parser_version)
            else:
                body = read_archived(page.path, max_bytes)
                raw = _store_intact(
                    home,
                    provider,
                    day,
                    f"archive://{provider}/{page.file_name}",
                    body,
                    kind=page.kind,
                    http_status=None,
                    fetched_at=now,
                    parser_version=parser_version,
                )
                seen[page.path] = (body, raw)
        except (OSError, ValueError) as exc:  # unreadable recording or raw store: this date fails
            collected[day] = exc
            continue
        collected[day] = CollectedPage(
            provider=provider,
            snapshot_date=day,
            source="archive",
            kind=page.kind,
            body=body,
            raw=raw,
            page_date=page.page_date,
            archived_path=page.path,
            notes=_twin_notes(page),
        )
    return collected


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
