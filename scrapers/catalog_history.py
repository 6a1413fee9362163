"""A price catalog's version history as dated files: which file of which commit speaks for each day.

Per UTC day, the last commit that touched the catalog (``git_history.last_commit_per_day``)
holds every cloud's file as it stood at the end of that day; each tracked cloud's newest-layout
``vms.csv`` in that commit is the day's observation of the cloud (a file that did not change
that day is observed again: the catalog still listed those prices). Files are read once per
distinct blob (most clouds change far less often than daily) and parsed by
:mod:`gpuprice.scrapers.skypilot_catalog`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuprice.scrapers.git_history import BlobReader, DayCommit, last_commit_per_day, tree_files
from gpuprice.scrapers.skypilot_catalog import (
    CATALOG_PREFIX,
    CatalogFile,
    CatalogFileError,
    ParsedCatalog,
    catalog_files,
    parse_catalog,
)

SOURCES: tuple[str, ...] = ("skypilot-catalog",)


@dataclass(frozen=True)
class CatalogDay:
    """One day of a catalog's history: its last commit and the tracked clouds' files in it."""

    day: dt.date
    commit: DayCommit
    files: tuple[CatalogFile, ...]


@dataclass(frozen=True)
class ParsedFile:
    """One parsed blob: its offers and quarantine, and the sha256 of its bytes (provenance)."""

    parsed: ParsedCatalog
    sha256: str


def plan_days(repo: Path, *, since: dt.date | None = None, until: dt.date | None = None) -> list[CatalogDay]:
    """The days of the range with a catalog commit, each with its last commit and files."""
    days = []
    for commit in last_commit_per_day(repo, paths=(CATALOG_PREFIX,), since=since, until=until):
        files = catalog_files(tree_files(repo, commit.commit, CATALOG_PREFIX))
        if files:
            days.append(CatalogDay(day=commit.day, commit=commit, files=tuple(files)))
    return days


class CatalogReader:
    """Parses catalog files by blob, keeping the most recent ``cache_size`` parses (a context manager)."""

    def __init__(self, repo: Path, *, cache_size: int = 8) -> None:
        self._blobs = BlobReader(repo)
        self._cache: OrderedDict[str, ParsedFile] = OrderedDict()
        self._cache_size = cache_size

    def __enter__(self) -> CatalogReader:
        self._blobs.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._blobs.__exit__(None, None, None)

    def parse(self, file: CatalogFile, commit: str, *, check_only: bool = False) -> ParsedFile:
        """The file's offers; CatalogFileError (naming path and commit) when it is not the layout.

        ``check_only`` reads the file as the import would and keeps nothing but its coverage."""
        cached = self._cache.get(file.blob)
        if cached is not None:
            self._cache.move_to_end(file.blob)
            return cached
        data = self._blobs.read(file.blob)
        where = f"{file.path} (commit {commit[:12]})"
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise CatalogFileError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        parsed = parse_catalog(text, cloud=file.cloud, where=where, check_only=check_only)
        result = ParsedFile(parsed=parsed, sha256=hashlib.sha256(data).hexdigest())
        if check_only:
            return result
        self._cache[file.blob] = result
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return result


def distinct_files(days: Sequence[CatalogDay]) -> list[tuple[CatalogFile, str]]:
    """Each distinct blob of the plan once, with the first commit that holds it (for checking)."""
    seen: set[str] = set()
    result = []
    for day in days:
        for file in day.files:
            if file.blob not in seen:
                seen.add(file.blob)
                result.append((file, day.commit.commit))
    return result
