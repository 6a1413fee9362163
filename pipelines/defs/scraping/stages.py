"""A provider's three stages for one date or a range: collect the pages, parse and check them,
load the snapshot partitions.

They run in one Dagster step per provider (``assets.py``): a value goes from stage to stage in
memory, on one warehouse connection. Each stage still ends in its own asset's materialization,
and a failure is recorded in ``provider_runs`` (the provider turns stale) where it happened.
A range collects and parses its pages in a batch (one parse per distinct page), holds back only
the dates that fail, and writes its partitions in a few transactions.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from gpuprice.pipelines import progress
from gpuprice.pipelines.asset_keys import provider_asset_key
from gpuprice.pipelines.defs.scraping.checks import CHECKS, RunHistory, evaluate_checks
from gpuprice.pipelines.defs.scraping.connections import step_connection
from gpuprice.pipelines.defs.scraping.pages import collect_pages, run_source, snapshot_source, stored_pages
from gpuprice.pipelines.resources import ScrapeSettings, WarehouseResource
from gpuprice.scrapers.offer import Offer, ParseResult, StructureMissing
from gpuprice.scrapers.rawstore import RawPage
from gpuprice.scrapers.registry import parse_page, parse_reuse_key, provider_parser
from gpuprice.warehouse import writes
from gpuprice.warehouse.queries import snapshot_row_count

# Dates per delete + insert transaction of a backfill: big enough to amortise the commit,
# small enough that an interrupted backfill keeps most of its work.
SNAPSHOT_BATCH_DATES = 366


@dataclass
class Collected:
    """The raw stage's outcome: per date (ISO key) the page to parse, and the asset's metadata."""

    pages: dict[str, dict]
    metadata: dict[str, Any]


@dataclass
class Parsed:
    """The parse stage's outcome: the dates that passed every check, with their parse."""

    passed: dict[str, dict]
    metadata: dict[str, Any]
    check_results: list[dg.AssetCheckResult] = field(default_factory=list)


def record_failures(
    warehouse: WarehouseResource,
    *,
    provider: str,
    failures: dict[dt.date, tuple[str, Any]],
    source: str,
    run_id: str,
    started_at: dt.datetime | None = None,
) -> None:
    """Mark the provider's runs failed, in one transaction: {date: (error, parse report or None)}.
    The previous snapshot of each date stays the latest; ``run_id`` is the Dagster run's."""
    if not failures:
        return
    started = started_at or dt.datetime.now(dt.UTC)
    with step_connection(warehouse) as con:
        writes.record_provider_runs(
            con,
            [
                {
                    "provider": provider,
                    "snapshot_date": day,
                    "source": source,
                    "status": "failed",
                    "offers": 0,
                    "report": report,
                    "error": error[:2000],
                    "started_at": started,
                    "run_id": run_id,
                }
                for day, (error, report) in sorted(failures.items())
            ],
        )


def offers_markdown(offers: list[Offer], limit: int = 10) -> str:
    """A Markdown preview of the cheapest offers (for the Dagster UI)."""
    rows = sorted(offers, key=lambda o: o.usd_per_gpu_hour)[:limit]
    lines = ["| gpu | raw name | count | tier | $/GPU-h |", "|---|---|---|---|---|"]
    for o in rows:
        raw = o.gpu_raw.replace("|", "\\|")
        lines.append(f"| {o.gpu} | {raw} | {o.gpu_count} | {o.tier} | {o.usd_per_gpu_hour:.4f} |")
    return "\n".join(lines)


def collect_stage(
    provider: str,
    days: list[dt.date],
    warehouse: WarehouseResource,
    scrape: ScrapeSettings,
    *,
    retries_allowed: bool,
    run_id: str,
) -> Collected:
    """Every date's page, stored gzipped and content-addressed before anything parses it."""
    started = dt.datetime.now(dt.UTC)
    parser_version = provider_parser(provider).PARSER_VERSION
    # Per date: the pages stored (the last is the one to parse), how it was chosen, its own date.
    pages: dict[dt.date, list[RawPage] | Exception] = {}
    chosen: dict[dt.date, tuple[tuple[str, ...], dt.date]] = {}
    if scrape.source == "archive":
        from gpuprice.scrapers.collect import collect_archived_range

        collected = collect_archived_range(
            provider,
            days,
            home=warehouse.home_path,
            archive_dir=scrape.archive_path,
            parser_version=parser_version,
        )
        for d, c in collected.items():
            pages[d] = c if isinstance(c, Exception) else [c.raw]
            if not isinstance(c, Exception):
                chosen[d] = (c.notes, c.page_date)
    elif scrape.source == "raw":
        stored = stored_pages(provider, days, warehouse, parser_version)
        for d, (page, page_date) in stored.items():
            pages[d] = page if isinstance(page, Exception) else [page]
            chosen[d] = ((), page_date)
    else:
        for day in days:
            try:
                fetched = collect_pages(provider, day, scrape, warehouse, parser_version)
            except Exception as exc:  # any fetch failure: record it, keep yesterday's data
                pages[day] = exc
                continue
            pages[day] = [c.raw for c in fetched]
            chosen[day] = (fetched[-1].notes, fetched[-1].page_date)
    failures = {d: (f"fetch failed: {p}", None) for d, p in pages.items() if isinstance(p, Exception)}
    # A re-parse with nothing kept for a date has nothing to say about it: the date's earlier
    # record (a success, or the failure that left no page, with its own cause) stands.
    unstored = {d for d, p in pages.items() if scrape.source == "raw" and isinstance(p, FileNotFoundError)}
    record_failures(
        warehouse,
        provider=provider,
        failures={d: f for d, f in failures.items() if d not in unstored},
        source=scrape.source,
        run_id=run_id,
        started_at=started,
    )
    ok = {d: p for d, p in pages.items() if not isinstance(p, Exception)}
    if not ok and len(days) == 1:  # a range records its failed dates and goes on
        cause = next(p for p in pages.values() if isinstance(p, Exception))
        # Archive pages do not come back on retry; live fetches may (the fetcher already retried).
        raise dg.Failure(
            description=f"{provider}: fetch failed: {cause}",
            allow_retries=scrape.source == "live" and retries_allowed,
        ) from cause
    with step_connection(warehouse) as con:  # re-parsed pages too: a lost manifest is rebuilt
        writes.record_raw_pages(con, [page.model_dump() for kept in ok.values() for page in kept])
    progress.advance(f"pages/{provider}", len(days))
    values = {}
    for day, kept in ok.items():
        raw = kept[-1].model_dump()
        values[day.isoformat()] = {
            **raw,
            "source": scrape.source,
            "snapshot_source": snapshot_source(scrape.source, raw["url"]),
            "started_at": started,
            "run_id": run_id,
            # The page's own date: a replayed recording may be older than the partition (never newer).
            "notes": list(chosen[day][0]),
            "page_date": chosen[day][1],
        }
    if len(days) == 1:
        raw = values[days[0].isoformat()]
        metadata = {
            "url": raw["url"],
            "bytes": raw["bytes"],
            "sha256": raw["sha256"],
            "stored_path": dg.MetadataValue.path(raw["stored_path"]),
            "http_status": raw.get("http_status"),
            "pages_fetched": len(ok[days[0]]),
        }
    else:
        metadata = range_metadata(days, failures, {v["sha256"] for v in values.values()})
    return Collected(pages=values, metadata=metadata)


def parse_stage(
    provider: str, days: list[dt.date], raws: dict[str, dict], warehouse: WarehouseResource
) -> Parsed:
    """Parse every distinct page once and run the blocking checks on each date's offers.

    One date: a page that cannot be read or parsed fails the step (raised here); failing checks
    come back as failed check results, which fail the step once they are reported. A range holds
    back only its failing dates (recorded failed, their snapshots kept) and reports the checks as
    warnings naming them."""
    from gpuprice.scrapers.rawstore import read_raw

    history = RunHistory.before(warehouse, provider, days[0])
    bodies: dict[str, bytes | Exception] = {}
    parses: dict[tuple, ParseResult | Exception] = {}
    failures: dict[dt.date, tuple[str, Any]] = {}
    passed: dict[str, dict] = {}
    check_results: list[dg.AssetCheckResult] = []
    crash: Exception | None = None
    for day in days:
        raw = raws.get(day.isoformat())
        if raw is None:  # the raw stage recorded why
            history.record(day, "failed", 0, None)
            continue
        sha = raw["sha256"]
        if sha not in bodies:
            try:
                bodies[sha] = read_raw(raw["stored_path"])
            except (OSError, ValueError) as exc:  # damaged or missing stored page: visibly failed
                bodies[sha] = exc
        body = bodies[sha]
        if isinstance(body, Exception):
            failures[day] = (f"stored page unreadable: {body}", None)
            history.record(day, "failed", 0, None)
            continue
        # Scheduled prices ("Effective October 1") are read against the page's own date.
        page_date = raw.get("page_date") or day
        key = parse_reuse_key(provider, sha, page_date)
        if key not in parses:
            try:
                parses[key] = parse_page(provider, body, observed_on=page_date)
            except StructureMissing as exc:
                parses[key] = exc
            except Exception as exc:
                parses[key] = exc
                crash = crash or exc
        result = parses[key]
        if isinstance(result, Exception):
            label = "parse failed" if isinstance(result, StructureMissing) else "parser crashed"
            text = (
                str(result) if isinstance(result, StructureMissing) else f"{type(result).__name__}: {result}"
            )
            # the fallback's quarantined rows travel on StructureMissing's report
            failures[day] = (f"{label}: {text}", getattr(result, "report", None))
            history.record(day, "failed", 0, None)
            continue
        for note in raw.get("notes") or ():  # how the page was chosen (archive twins)
            if note not in result.report.notes:
                result.report.notes.append(note)
        results, failed = evaluate_checks(provider, result, history.baseline(day, len(result.offers)))
        if failed:
            failures[day] = ("check failed: " + "; ".join(failed), result.report)
            history.record(day, "failed", 0, result.report.offers)
        else:
            passed[day.isoformat()] = {"result": result, "raw": raw}
            history.record(day, "success", len(result.offers), result.report.offers)
        check_results = results if len(days) == 1 else check_results
    progress.advance(f"parse/{provider}", len(days))
    if failures:
        first = raws[min(failures).isoformat()]
        record_failures(
            warehouse,
            provider=provider,
            failures=failures,
            source=run_source(first),
            run_id=first["run_id"],
            started_at=first.get("started_at"),
        )
    if len(days) == 1:
        only = raws[days[0].isoformat()]
        if not check_results:  # the page could not be read or parsed
            # Not retried: the same page parses the same way (a retry would fetch it again).
            failure = dg.Failure(description=f"{provider}: {failures[days[0]][0]}", allow_retries=False)
            if crash is not None:
                raise failure from crash
            raise failure
        result = parses[parse_reuse_key(provider, only["sha256"], only.get("page_date") or days[0])]
        assert isinstance(result, ParseResult)
        report = result.report
        metadata = {
            "offers": len(result.offers),
            "parse_strategy": report.parse_strategy,
            "rejected": len(report.rejected),
            "unpriced_rows": report.unpriced_rows,
            "unknown_gpus": ", ".join(report.unknown_gpus) or "none",
            "missing_columns": ", ".join(report.missing_columns) or "none",
            "preview": dg.MetadataValue.md(offers_markdown(result.offers)),
        }
        return Parsed(passed=passed, metadata=metadata, check_results=check_results)
    # What goes on to the snapshot stage passed every check, so a failure here warns, naming the
    # dates, instead of blocking the whole range.
    warnings = []
    for name in CHECKS:
        held = sorted(d for d, (error, _) in failures.items() if f"{name}: " in error)
        warnings.append(
            dg.AssetCheckResult(
                check_name=name,
                asset_key=provider_asset_key("parsed", provider),
                passed=not held,
                severity=dg.AssetCheckSeverity.WARN,
                description=f"{len(days) - len(held)} of {len(days)} dates passed"
                + (f"; held back: {', '.join(d.isoformat() for d in held[:20])}" if held else ""),
                metadata={"dates_held_back": len(held)},
            )
        )
    return Parsed(
        passed=passed,
        metadata=range_metadata(days, failures, {key[0] for key in parses}),
        check_results=warnings,
    )


def load_stage(
    provider: str, days: list[dt.date], passed: dict[str, dict], warehouse: WarehouseResource
) -> dict[str, Any]:
    """Replace each passed date's snapshot partition (delete + insert per batch); the metadata."""
    by_source: dict[str, list[writes.SnapshotPartition]] = {}
    for key, value in sorted(passed.items()):
        raw = value["raw"]
        by_source.setdefault(raw["snapshot_source"], []).append(
            writes.SnapshotPartition(
                snapshot_date=dt.date.fromisoformat(key),
                result=value["result"],
                raw_sha256=raw["sha256"],
                parser_version=raw.get("parser_version"),
                started_at=raw.get("started_at"),
                observed_on=raw.get("page_date") or dt.date.fromisoformat(key),
                source_file=raw.get("url"),
                run_id=raw["run_id"],
            )
        )
    counts: dict[dt.date, int] = {}
    with step_connection(warehouse) as con:
        for source, partitions in by_source.items():
            for batch in _batches(partitions, SNAPSHOT_BATCH_DATES):
                counts.update(
                    writes.replace_snapshot_partitions(
                        con, provider=provider, source=source, partitions=batch
                    )
                )
                progress.advance(f"load/{provider}", len(batch))
        total = snapshot_row_count(con)
    progress.advance(f"load/{provider}", len(days) - len(counts))
    if len(days) == 1 and passed:
        result: ParseResult = next(iter(passed.values()))["result"]
        return {
            "dagster/row_count": sum(counts.values()),
            "warehouse_rows_total": total,
            "quarantined": len(result.report.rejected),
            "cheapest": dg.MetadataValue.md(offers_markdown(result.offers, 5)),
        }
    return {
        "dagster/row_count": sum(counts.values()),
        "warehouse_rows_total": total,
        "dates_loaded": len(counts),
    }


def _batches(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def range_metadata(days: list[dt.date], failures: dict, distinct: set) -> dict:
    return {
        "dates": len(days),
        "first_date": days[0].isoformat(),
        "last_date": days[-1].isoformat(),
        "dates_failed": len(failures),
        "distinct_pages": len(distinct),
        "failed_dates": ", ".join(d.isoformat() for d in sorted(failures)[:20]) or "none",
    }
