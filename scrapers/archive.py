"""Replay of recorded pages (``--source archive``).

Layout (CONTRACT.md): ``<archive>/<provider>/<YYYY-MM-DD>.<html|json>``, optionally ``.gz``.
A run for date D replays, per provider, the latest page at or before D.

Anything else in the folder (README, SOURCES.md, CSVs, editor backups, sub-folders) is ignored.
Names that try path tricks are refused: only the provider folders are read, file names must
match the pattern exactly (ASCII digits, a real date), and a symlink that leads outside the
archive is skipped with a warning. Gzipped pages are inflated with a size cap, so a gzip bomb in
an archive handed to us fails with a clear error instead of filling memory.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from gpuprice.scrapers.gunzip import GZIP_MAGIC, MAX_PAGE_BYTES, GunzipError, gunzip_capped
from gpuprice.scrapers.offer import PROVIDERS, Provider
from gpuprice.scrapers.rawstore import PageKind, check_date, check_provider

log = logging.getLogger("gpuprice.archive")

# The recorded pages shipped with the package: what --source archive replays unless GPUPRICE_ARCHIVE
# names another folder.
SAMPLE_ARCHIVE = Path(__file__).resolve().with_name("sample_archive")


def archive_or_sample(configured: Path | None) -> Path:
    """The configured archive folder (GPUPRICE_ARCHIVE, via gpuprice.settings), else the sample."""
    return configured if configured is not None else SAMPLE_ARCHIVE


_NAME_RE = re.compile(r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})\.(?P<kind>html|json)(?P<gz>\.gz)?")
# When one date has several recordings: the machine source (JSON API) first, as the live
# fetch prefers it, and a plain file before its gzipped twin.
_PREFERENCE = {("json", False): 0, ("json", True): 1, ("html", False): 2, ("html", True): 3}


class ArchiveError(ValueError):
    """An archived page that cannot be read safely (too large, corrupt gzip)."""


class ArchivedPage(BaseModel):
    """One recorded page in the archive."""

    model_config = ConfigDict(frozen=True)

    provider: Provider
    path: Path
    page_date: dt.date
    kind: PageKind
    compressed: bool
    # Other recordings of the same date, not replayed (see _PREFERENCE).
    also_recorded: tuple[str, ...] = ()

    @property
    def file_name(self) -> str:
        return self.path.name


def parse_archive_name(name: str) -> tuple[dt.date, PageKind, bool] | None:
    """(date, kind, gzipped) for a well-formed archive file name, else None."""
    match = _NAME_RE.fullmatch(name)
    if match is None:
        return None
    try:
        day = dt.date.fromisoformat(match.group("date"))
    except ValueError:  # 2026-02-30.html: looks right, is no date
        return None
    return day, match.group("kind"), match.group("gz") is not None  # type: ignore[return-value]


def _provider_pages(archive_dir: Path, provider: Provider) -> list[ArchivedPage]:
    root = Path(archive_dir).expanduser().resolve()
    folder = root / provider
    if not folder.is_dir():
        return []
    try:
        inside = folder.resolve().is_relative_to(root)
    except (OSError, RuntimeError):
        inside = False
    if not inside:
        log.warning("skipping archive folder %s: it leads outside %s", folder, root)
        return []
    pages: list[ArchivedPage] = []
    for entry in folder.iterdir():
        parsed = parse_archive_name(entry.name)
        if parsed is None:
            continue
        try:
            target = entry.resolve()
        except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
            log.warning("skipping archived page %s: a symlink loop", entry)
            continue
        if not target.is_relative_to(root):
            log.warning("skipping archived page %s: it leads outside %s", entry, root)
            continue
        if not entry.is_file():
            continue
        day, kind, compressed = parsed
        pages.append(
            ArchivedPage(provider=provider, path=entry, page_date=day, kind=kind, compressed=compressed)
        )
    return pages


def _sort_key(page: ArchivedPage) -> tuple[dt.date, int]:
    # Latest date first; within a date the preferred recording first.
    return (page.page_date, -_PREFERENCE[(page.kind, page.compressed)])


def find_archived_page(archive_dir: Path, provider: str, date: dt.date | str) -> ArchivedPage | None:
    """The latest recorded page of ``provider`` dated at or before ``date`` (None if none)."""
    provider = check_provider(provider)
    return latest_at_or_before(_provider_pages(archive_dir, provider), check_date(date))


def archived_pages(archive_dir: Path, provider: str) -> list[ArchivedPage]:
    """Every recording of ``provider`` (one listing of its folder, for replaying many dates)."""
    return _provider_pages(archive_dir, check_provider(provider))


def latest_at_or_before(pages: list[ArchivedPage], day: dt.date) -> ArchivedPage | None:
    """Of ``pages`` (one provider's), the one a run for ``day`` replays (None if none)."""
    candidates = [page for page in pages if page.page_date <= day]
    if not candidates:
        return None
    chosen = max(candidates, key=_sort_key)
    twins = [p.file_name for p in candidates if p.page_date == chosen.page_date and p != chosen]
    if twins:
        log.info(
            "%s %s: replaying %s (also recorded: %s)",
            chosen.provider,
            day,
            chosen.file_name,
            ", ".join(twins),
        )
        chosen = chosen.model_copy(update={"also_recorded": tuple(sorted(twins))})
    return chosen


def archive_dates(archive_dir: Path) -> dict[str, list[dt.date]]:
    """Per provider with recordings, the sorted distinct dates recorded."""
    result: dict[str, list[dt.date]] = {}
    for provider in PROVIDERS:
        dates = sorted({page.page_date for page in _provider_pages(archive_dir, provider)})  # type: ignore[arg-type]
        if dates:
            result[provider] = dates
    return result


def newest_archive_date(archive_dir: Path) -> dt.date | None:
    """The most recent date any provider has a recording for."""
    latest = [dates[-1] for dates in archive_dates(archive_dir).values()]
    return max(latest) if latest else None


def _inflate(data: bytes, max_bytes: int, source: Path) -> bytes:
    """Gunzip ``data`` (all members) without ever producing more than ``max_bytes``."""
    try:
        return gunzip_capped(data, max_bytes)
    except GunzipError as exc:
        if exc.reason == "too_large":
            raise ArchiveError(
                f"archived page {source} inflates past the {max_bytes}-byte cap (gzip bomb?)"
            ) from None
        if exc.reason == "truncated":
            raise ArchiveError(f"archived page {source} is a truncated gzip file") from None
        raise ArchiveError(f"archived page {source} is not valid gzip: {exc.detail}") from None


def read_archived(path: Path | str, max_bytes: int = MAX_PAGE_BYTES) -> bytes:
    """The page at ``path``, gunzipped when it is gzip (by name or by magic bytes), size-capped."""
    path = Path(path)
    size = path.stat().st_size
    # Deflate output is never much larger than its input (stored blocks add ~5 bytes per 64 KiB),
    # so a file over twice the cap inflates past it too; refusing it here bounds the read.
    if size > 2 * max_bytes + 1024:
        raise ArchiveError(f"archived page {path} is {size} bytes, over the {max_bytes}-byte cap")
    data = path.read_bytes()
    if data.startswith(GZIP_MAGIC):
        return _inflate(data, max_bytes, path)
    if path.name.endswith(".gz"):
        raise ArchiveError(f"archived page {path} is named .gz but is not gzip")
    if len(data) > max_bytes:
        raise ArchiveError(f"archived page {path} is {len(data)} bytes, over the {max_bytes}-byte cap")
    return data
