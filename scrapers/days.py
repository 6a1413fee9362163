"""A provider's pages for a run's dates: each date's page chosen once, stored, and parsed once.

:func:`collect_days` gives per date the page to parse, already in the raw store, or why there is
none; :func:`parse_days` gives per date its offers or why not. One date is a range of one.

Where a page comes from (``source``):

- ``live``: the provider's primary request first; when the structured reader finds no price
  structure in that body (Runpod's API changed, say), the fallback page is fetched too. Every
  body that arrived is stored; the page is chosen by parsing it, and that parse is the one used.
- ``archive``: the latest recording at or before the date (a range reads each recording once).
- ``raw``: the page already kept in the raw store, parsed again after a parser fix.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from gpuprice.scrapers.offer import ParseReport, ParseResult, StructureMissing
from gpuprice.scrapers.rawstore import RawPage
from gpuprice.sources import SNAPSHOT_SOURCE_OF, SnapshotSource, StepSource

if TYPE_CHECKING:
    from gpuprice.scrapers.fetch import PoliteFetcher
    from gpuprice.scrapers.pages import PageRequest

ParseOutcome = ParseResult | Exception


@dataclass(frozen=True)
class DayPage:
    """The page chosen for one date, stored in the raw store before anything parses it."""

    day: dt.date
    page: RawPage  # the page to parse
    stored: tuple[RawPage, ...]  # every body stored for the date (a fallback: the primary too)
    # The page's own date: a replayed recording may be older than the date (never newer).
    page_date: dt.date
    snapshot_source: SnapshotSource  # price_snapshots.source: a re-parsed page keeps its origin
    notes: tuple[str, ...] = ()  # how the page was chosen, for the parse report
    parse: ParseOutcome | None = None  # the parse that chose it (live), reused by parse_days


FailureStage = Literal["fetch", "read", "parse", "crash"]
_LABELS: dict[FailureStage, str] = {
    "fetch": "fetch failed",
    "read": "stored page unreadable",
    "parse": "parse failed",
    "crash": "parser crashed",
}


@dataclass(frozen=True)
class DayFailure:
    """Why a date has no page or no offers."""

    day: dt.date
    stage: FailureStage
    error: Exception
    # A re-parse with nothing kept for the date: its earlier record (a success, or the failure
    # that left no page, with its own cause) stands, so this one is not recorded.
    nothing_kept: bool = False

    @property
    def message(self) -> str:
        detail = f"{type(self.error).__name__}: {self.error}" if self.stage == "crash" else str(self.error)
        return f"{_LABELS[self.stage]}: {detail}"

    @property
    def report(self) -> ParseReport | None:
        """What the parse saw anyway (the fallback's quarantined rows travel on StructureMissing)."""
        return getattr(self.error, "report", None) if self.stage in ("parse", "crash") else None

    @property
    def cause(self) -> Exception | None:
        """The exception a one-date step's failure is chained to (a page without prices is no bug)."""
        return self.error if self.stage in ("fetch", "crash") else None


@dataclass(frozen=True)
class ParsedDay:
    """One date's offers, from its chosen page."""

    page: DayPage
    result: ParseResult


@dataclass
class ParsedDays:
    """Every date's parse or failure, oldest first, and how many distinct pages were parsed."""

    days: dict[dt.date, ParsedDay | DayFailure] = field(default_factory=dict)
    distinct_pages: int = 0


def snapshot_source(source: StepSource, url: str) -> SnapshotSource:
    """price_snapshots.source of a page: a re-parsed stored page keeps its origin."""
    if source == "raw":
        return "archive" if url.startswith("archive://") else "scrape"
    return SNAPSHOT_SOURCE_OF[source]


def collect_days(
    provider: str,
    days: Sequence[dt.date],
    source: StepSource,
    *,
    home: Path,
    archive_dir: Path,
    parser_version: str,
    kept: Mapping[dt.date, Mapping[str, Any]] | None = None,
) -> dict[dt.date, DayPage | DayFailure]:
    """Per date (oldest first) the page to parse, stored, or why there is none.

    ``kept`` (source ``raw``): the raw_pages rows of the dates, with the page date their earlier
    snapshot recorded (``page_date``), as the warehouse lists them."""
    if source == "archive":
        return _archived(provider, days, home=home, archive_dir=archive_dir, parser_version=parser_version)
    if source == "raw":
        return {day: _kept_page(provider, day, (kept or {}).get(day), home, parser_version) for day in days}
    found: dict[dt.date, DayPage | DayFailure] = {}
    for day in days:
        try:
            found[day] = choose_live_page(provider, day, home=home, parser_version=parser_version)
        except Exception as exc:  # any fetch failure: recorded, yesterday's data kept
            found[day] = DayFailure(day, "fetch", exc)
    return found


def choose_live_page(
    provider: str,
    day: dt.date,
    *,
    home: Path,
    parser_version: str,
    fetcher: PoliteFetcher | None = None,
    today: dt.date | None = None,
    requests: Sequence[PageRequest] | None = None,
) -> DayPage:
    """Today's page: the first body the structured reader finds prices in, else the primary one.

    The fallback page is fetched only when the primary has no price structure; a page that
    crashes the reader or is not the provider's is chosen (and reported) as it is. ``fetcher``,
    ``today`` and ``requests`` as for :func:`~gpuprice.scrapers.collect.iter_live_pages`."""
    from gpuprice.scrapers.bounds import parse_time_limit
    from gpuprice.scrapers.collect import iter_live_pages
    from gpuprice.scrapers.fallback import read_structured
    from gpuprice.scrapers.registry import parse_page, provider_parser

    parser = provider_parser(provider)
    stored: list[RawPage] = []
    bodies: list[tuple[bytes, StructureMissing]] = []
    chosen: tuple[RawPage, ParseOutcome] | None = None
    live = iter_live_pages(
        provider,
        day,
        home=home,
        fetcher=fetcher,
        today=today,
        requests=requests,
        parser_version=parser_version,
    )
    try:
        for fetched in live:
            stored.append(fetched.raw)
            try:
                with parse_time_limit(provider):
                    structured = read_structured(parser, fetched.body, observed_on=day)
                    if isinstance(structured, StructureMissing):
                        bodies.append((fetched.body, structured))
                        continue  # fetch the fallback page, if the provider has one
                    outcome: ParseOutcome = parse_page(provider, fetched.body, day, structured=structured)
            except Exception as exc:  # reported by the parse, with its cause
                outcome = exc
            chosen = (fetched.raw, outcome)
            break
    finally:
        live.close()
    if chosen is None:  # nothing has a price structure: the primary page, read by the fallback extractor
        body, missing = bodies[0]
        try:
            with parse_time_limit(provider):
                outcome = parse_page(provider, body, day, structured=missing)
        except Exception as exc:
            outcome = exc
        chosen = (stored[0], outcome)
    page, outcome = chosen
    return DayPage(
        day=day,
        page=page,
        stored=tuple(stored),
        page_date=day,
        snapshot_source="scrape",
        parse=outcome,
    )


def _archived(
    provider: str, days: Sequence[dt.date], *, home: Path, archive_dir: Path, parser_version: str
) -> dict[dt.date, DayPage | DayFailure]:
    from gpuprice.scrapers.collect_archive import collect_archived_range

    found: dict[dt.date, DayPage | DayFailure] = {}
    pages = collect_archived_range(
        provider, days, home=home, archive_dir=archive_dir, parser_version=parser_version
    )
    for day, page in pages.items():
        if isinstance(page, Exception):
            found[day] = DayFailure(day, "fetch", page)
            continue
        found[day] = DayPage(
            day=day,
            page=page.raw,
            stored=(page.raw,),
            page_date=page.page_date,
            snapshot_source="archive",
            notes=page.notes,
        )
    return found


def _kept_page(
    provider: str, day: dt.date, row: Mapping[str, Any] | None, home: Path, parser_version: str
) -> DayPage | DayFailure:
    """The page kept for the date: the one its snapshot was parsed from when the manifest names
    it, else the newest one the manifest lists, else (manifest lost) the newest body in the
    date's folder. Its date is the one its earlier snapshot recorded, else the date itself."""
    from gpuprice.scrapers.rawstore import check_provider, stored_bodies

    if row is not None and Path(row["stored_path"]).is_file():
        fields = {k: v for k, v in row.items() if k != "page_date"}
        page = RawPage.model_validate({**fields, "parser_version": parser_version})
        page_date = row.get("page_date") or day
    else:
        bodies = stored_bodies(home, provider, day)
        if not bodies:
            missing = FileNotFoundError(f"no stored {provider} page for {day.isoformat()} in the raw store")
            return DayFailure(day, "fetch", missing, nothing_kept=True)
        path = bodies[0]
        page = RawPage(
            provider=check_provider(provider),
            url=f"raw://{provider}/{day.isoformat()}/{path.name}",
            snapshot_date=day,
            fetched_at=dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC),
            sha256=path.name.split(".", 1)[0],
            bytes=path.stat().st_size,
            stored_path=str(path),
            parser_version=parser_version,
        )
        page_date = day
    return DayPage(
        day=day,
        page=page,
        stored=(page,),
        page_date=page_date,
        snapshot_source=snapshot_source("raw", page.url),
    )


def parse_days(provider: str, pages: Mapping[dt.date, DayPage]) -> ParsedDays:
    """Every date's offers, oldest first: each distinct page read once from the raw store and
    parsed once (the same bytes, parser version and, when the parser reads it, page date)."""
    from gpuprice.scrapers.rawstore import read_raw
    from gpuprice.scrapers.registry import parse_page, parse_reuse_key

    bodies: dict[str, bytes | Exception] = {}
    parses: dict[tuple[str, str, dt.date | None], ParseOutcome] = {}
    parsed = ParsedDays()
    for day, chosen in sorted(pages.items()):
        page = chosen.page
        # Scheduled prices ("Effective October 1") are read against the page's own date.
        key = parse_reuse_key(provider, page.sha256, chosen.page_date)
        if key not in parses and chosen.parse is not None:
            parses[key] = chosen.parse
        if key not in parses:
            if page.sha256 not in bodies:
                try:
                    bodies[page.sha256] = read_raw(page.stored_path)
                except (OSError, ValueError) as exc:  # damaged or missing stored page: visibly failed
                    bodies[page.sha256] = exc
            body = bodies[page.sha256]
            if isinstance(body, Exception):
                parsed.days[day] = DayFailure(day, "read", body)
                continue
            try:
                parses[key] = parse_page(provider, body, observed_on=chosen.page_date)
            except Exception as exc:
                parses[key] = exc
        result = parses[key]
        if isinstance(result, Exception):
            stage: FailureStage = "parse" if isinstance(result, StructureMissing) else "crash"
            parsed.days[day] = DayFailure(day, stage, result)
            continue
        for note in chosen.notes:  # how the page was chosen (archive twins)
            if note not in result.report.notes:
                result.report.notes.append(note)
        parsed.days[day] = ParsedDay(chosen, result)
    parsed.distinct_pages = len({key[0] for key in parses})
    return parsed
