"""Where a provider's page for a date comes from: fetched live, replayed from the archive, or
(``--source raw``) the page already kept in the raw store, parsed again after a parser fix."""

import datetime as dt
from pathlib import Path

from gpuprice.pipelines.defs.scraping.connections import step_connection
from gpuprice.pipelines.resources import ScrapeSettings, WarehouseResource
from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.rawstore import RawPage
from gpuprice.scrapers.registry import provider_parser
from gpuprice.sources import SNAPSHOT_SOURCE_OF
from gpuprice.warehouse import queries


def collect_pages(
    provider: str, day: dt.date, scrape: ScrapeSettings, warehouse: WarehouseResource, parser_version
):
    """The pages stored for the day; the last one is the page to parse.

    Live: the primary request first; when its body has no price structure (Runpod's API
    changed, say), the fallback page is fetched too. Every fetched body is kept.
    """
    from gpuprice.scrapers.collect import collect_page, iter_live_pages

    if scrape.source == "archive":
        return [
            collect_page(
                provider,
                day,
                source="archive",
                home=warehouse.home_path,
                archive_dir=scrape.archive_path,
                parser_version=parser_version,
            )
        ]
    module = provider_parser(provider)
    pages = []
    found = False
    live = iter_live_pages(provider, day, home=warehouse.home_path, parser_version=parser_version)
    try:
        for page in live:
            pages.append(page)
            try:
                module.parse(page.body, observed_on=day)
            except StructureMissing:
                continue  # fetch the fallback page, if the provider has one
            except Exception:
                pass  # a crashing parser is reported by the parsed asset, with its cause
            found = True
            break
    finally:
        live.close()
    if not found and len(pages) > 1:
        pages.append(pages.pop(0))  # nothing parses: report on the primary page
    return pages


def stored_pages(
    provider: str, days: list[dt.date], warehouse: WarehouseResource, parser_version
) -> dict[dt.date, tuple[RawPage | Exception, dt.date]]:
    """``--source raw``: per date the page kept in the raw store to parse again, and its own date.

    The page the date's snapshot was parsed from when the manifest names it, else the newest one
    the manifest lists, else (manifest lost) the newest body in the date's folder. The page's date
    is the one its earlier snapshot recorded (a replayed recording may be older than the
    partition), else the partition's date."""
    from gpuprice.scrapers.rawstore import check_provider, stored_bodies

    with step_connection(warehouse) as con:
        manifest = queries.raw_pages_to_reparse(con, provider, days[0], days[-1])
    found: dict[dt.date, tuple[RawPage | Exception, dt.date]] = {}
    for day in days:
        row = manifest.get(day)
        if row is not None and Path(row["stored_path"]).is_file():
            page_date = row.pop("page_date", None) or day
            found[day] = (RawPage.model_validate({**row, "parser_version": parser_version}), page_date)
            continue
        bodies = stored_bodies(warehouse.home_path, provider, day)
        if not bodies:
            found[day] = (
                FileNotFoundError(f"no stored {provider} page for {day.isoformat()} in the raw store"),
                day,
            )
            continue
        path = bodies[0]
        found[day] = (
            RawPage(
                provider=check_provider(provider),
                url=f"raw://{provider}/{day.isoformat()}/{path.name}",
                snapshot_date=day,
                fetched_at=dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC),
                sha256=path.name.split(".", 1)[0],
                bytes=path.stat().st_size,
                stored_path=str(path),
                parser_version=parser_version,
            ),
            day,
        )
    return found


def run_source(raw: dict) -> str:
    """provider_runs.source of a failure: the run's source, or the page's origin when re-parsing."""
    return raw["snapshot_source"] if raw["source"] == "raw" else raw["source"]


def snapshot_source(scrape_source: str, url: str) -> str:
    """price_snapshots.source of a page: a re-parsed stored page keeps its origin."""
    if scrape_source == "raw":
        return "archive" if url.startswith("archive://") else "scrape"
    return SNAPSHOT_SOURCE_OF[scrape_source]  # type: ignore[index]
