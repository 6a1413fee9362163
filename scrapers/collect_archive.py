"""Replaying recorded pages: the latest recording at or before a date, for one date or many (a
backfill), each stored in the raw store before it is returned."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from pathlib import Path

from gpuprice.scrapers.archive import (
    SAMPLE_ARCHIVE,
    ArchivedPage,
    archive_dates,
    archived_pages,
    find_archived_page,
    latest_at_or_before,
    read_archived,
)
from gpuprice.scrapers.collected import CollectedPage, NoArchivedPage, store_intact
from gpuprice.scrapers.gunzip import MAX_PAGE_BYTES
from gpuprice.scrapers.offer import Provider
from gpuprice.scrapers.rawstore import RawPage, check_date, check_provider, link_raw

log = logging.getLogger("gpuprice.collect")


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
    raw = _store_recording(home, provider, day, page, body, dt.datetime.now(dt.UTC), parser_version)
    if page.page_date != day:
        log.info("%s %s: replaying the recording of %s", provider, day, page.page_date)
    return _replayed(provider, day, page, body, raw)


def _store_recording(
    home: Path,
    provider: str,
    day: dt.date,
    page: ArchivedPage,
    body: bytes,
    fetched_at: dt.datetime,
    parser_version: str | None,
) -> RawPage:
    """A recording's body kept in the raw store for ``day``, as a replay (no HTTP status)."""
    return store_intact(
        home,
        provider,
        day,
        f"archive://{provider}/{page.file_name}",
        body,
        kind=page.kind,
        http_status=None,
        fetched_at=fetched_at,
        parser_version=parser_version,
    )


def _replayed(
    provider: Provider, day: dt.date, page: ArchivedPage, body: bytes, raw: RawPage
) -> CollectedPage:
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
                raw = _store_recording(home, provider, day, page, body, now, parser_version)
                seen[page.path] = (body, raw)
        except (OSError, ValueError) as exc:  # unreadable recording or raw store: this date fails
            collected[day] = exc
            continue
        collected[day] = _replayed(provider, day, page, body, raw)
    return collected
