"""A collected page: the body ready for the parser with the ``raw_pages`` row that records it, and
the raw store write every collector makes before anyone parses the body."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from gpuprice.scrapers.offer import Provider
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.rawstore import PageKind, RawPage, RawStoreError, read_raw, store_raw
from gpuprice.sources import PageSource

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


def store_intact(home: Path, provider: str, day: dt.date, url: str, body: bytes, **fields) -> RawPage:
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
