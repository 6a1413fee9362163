"""Per provider: raw page -> parsed offers -> snapshot partition.

Each stage is its own asset so a failure is visible where it happened, the raw page is kept
before parsing, and blocking checks on the parsed offers stop a bad page from replacing
yesterday's snapshot. A failure is recorded in ``provider_runs`` (the provider turns stale)
and never stops the other providers.

Every stage takes one date or, in a single-run backfill, a range of dates (``pipelines.ranges``):
a range collects and parses its pages in a batch (one parse per distinct page), holds back only
the dates that fail, and writes its partitions in a few transactions.
"""

import datetime as dt
from typing import Any

import dagster as dg

from gpuprice.pipelines import progress
from gpuprice.pipelines.asset_keys import provider_asset_key
from gpuprice.pipelines.defs.scraping.checks import CHECKS, RunHistory, check_specs, evaluate_checks
from gpuprice.pipelines.defs.scraping.connections import step_connection
from gpuprice.pipelines.defs.scraping.pages import collect_pages, run_source, snapshot_source, stored_pages
from gpuprice.pipelines.partitions import daily_partitions
from gpuprice.pipelines.ranges import SINGLE_RUN, as_output, by_partition, partition_dates
from gpuprice.pipelines.resources import WAREHOUSE_POOL, ScrapeSettings, WarehouseResource
from gpuprice.scrapers.offer import PROVIDERS, Offer, ParseResult, StructureMissing
from gpuprice.scrapers.rawstore import RawPage
from gpuprice.scrapers.registry import parse_page, parse_reuse_key, provider_parser
from gpuprice.warehouse import writes
from gpuprice.warehouse.queries import snapshot_row_count

FETCH_RETRY = dg.RetryPolicy(
    max_retries=2, delay=30, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS
)
# Run tag that switches FETCH_RETRY off. `gpuprice run` sets it: the fetcher has already spent its
# retry budget (backoff, Retry-After), and re-running the step would triple the requests to a
# struggling site and keep the person at the terminal waiting 30-90 s per failing provider.
STEP_RETRIES_TAG = "gpuprice/step_retries"


def step_retries_allowed(context: dg.AssetExecutionContext) -> bool:
    return context.run.tags.get(STEP_RETRIES_TAG, "on") != "off"


def record_failure(
    warehouse: WarehouseResource,
    *,
    provider: str,
    snapshot_date: dt.date,
    source: str,
    error: str,
    report=None,
    started_at: dt.datetime | None = None,
) -> None:
    """Mark the provider's run for this date failed; its previous snapshot stays the latest."""
    record_failures(
        warehouse,
        provider=provider,
        failures={snapshot_date: (error, report)},
        source=source,
        started_at=started_at,
    )


def record_failures(
    warehouse: WarehouseResource,
    *,
    provider: str,
    failures: dict[dt.date, tuple[str, Any]],
    source: str,
    started_at: dt.datetime | None = None,
) -> None:
    """``record_failure`` for many dates in one transaction: {date: (error, parse report or None)}."""
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


def build_provider_assets(provider: str) -> list[dg.AssetsDefinition]:
    def stage(name: str, upstream: dict[str, str] | None = None, **spec: Any):
        """The asset ``<name>/<provider>``, fed by ``{input name: upstream stage}``: every stage is
        daily (one date or, in a single-run backfill, a range), in the scraping group and the
        warehouse pool."""
        ins = {arg: dg.AssetIn(key=provider_asset_key(up, provider)) for arg, up in (upstream or {}).items()}
        return dg.asset(
            key=provider_asset_key(name, provider),
            ins=ins or None,
            partitions_def=daily_partitions,
            backfill_policy=SINGLE_RUN,
            group_name="scraping",
            pool=WAREHOUSE_POOL,
            **spec,
        )

    @stage(
        "raw",
        kinds={"python", "file"},
        retry_policy=FETCH_RETRY,
        description=f"{provider}: the pricing page for the day, stored gzipped and content-addressed before parsing.",
    )
    def raw_page(context: dg.AssetExecutionContext, warehouse: WarehouseResource, scrape: ScrapeSettings):
        days = partition_dates(context)
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
        unstored = {
            d for d, p in pages.items() if scrape.source == "raw" and isinstance(p, FileNotFoundError)
        }
        record_failures(
            warehouse,
            provider=provider,
            failures={d: f for d, f in failures.items() if d not in unstored},
            source=scrape.source,
            started_at=started,
        )
        ok = {d: p for d, p in pages.items() if not isinstance(p, Exception)}
        if not ok and len(days) == 1:  # a range records its failed dates and goes on
            cause = next(p for p in pages.values() if isinstance(p, Exception))
            # Archive pages do not come back on retry; live fetches may (the fetcher already retried).
            raise dg.Failure(
                description=f"{provider}: fetch failed: {cause}",
                allow_retries=scrape.source == "live" and step_retries_allowed(context),
            ) from cause
        with step_connection(warehouse) as con:  # re-parsed pages too: a lost manifest is rebuilt
            writes.record_raw_pages(con, [page.model_dump() for kept in ok.values() for page in kept])
        progress.advance(f"pages/{provider}", len(days))
        values = {}
        for day, kept in ok.items():
            raw = kept[-1].model_dump()
            source = snapshot_source(scrape.source, raw["url"])
            values[day.isoformat()] = {
                **raw,
                "source": scrape.source,
                "snapshot_source": source,
                "started_at": started,
                # The page's own date: a replayed recording may be older than the partition (never newer).
                "notes": list(chosen[day][0]),
                "page_date": chosen[day][1],
            }
        if len(days) == 1:
            raw = values[days[0].isoformat()]
            context.add_output_metadata(
                {
                    "url": raw["url"],
                    "bytes": raw["bytes"],
                    "sha256": raw["sha256"],
                    "stored_path": dg.MetadataValue.path(raw["stored_path"]),
                    "http_status": raw.get("http_status"),
                    "pages_fetched": len(ok[days[0]]),
                }
            )
        else:
            context.add_output_metadata(
                _range_metadata(days, failures, {v["sha256"] for v in values.values()})
            )
        return as_output(context, values)

    @stage(
        "parsed",
        {"raw_page": "raw"},
        kinds={"python"},
        description=f"{provider}: offers parsed from the stored page, with the parse report (not yet published).",
        check_specs=check_specs(provider),
    )
    def parsed_offers(context: dg.AssetExecutionContext, raw_page: Any, warehouse: WarehouseResource):
        from gpuprice.scrapers.rawstore import read_raw

        days = partition_dates(context)
        raws = by_partition(context, raw_page)
        history = RunHistory.before(warehouse, provider, days[0])
        bodies: dict[str, bytes | Exception] = {}
        parses: dict[tuple, ParseResult | Exception] = {}
        failures: dict[dt.date, tuple[str, Any]] = {}
        passed: dict[str, dict] = {}
        check_results: list[dg.AssetCheckResult] = []
        crash: Exception | None = None
        for day in days:
            raw = raws.get(day.isoformat())
            if raw is None:  # the raw step recorded why
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
                    str(result)
                    if isinstance(result, StructureMissing)
                    else f"{type(result).__name__}: {result}"
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
                started_at=first.get("started_at"),
            )
        if len(days) == 1:
            only = raws[days[0].isoformat()]
            if not check_results:  # the page could not be read or parsed
                if crash is not None:
                    raise crash
                raise dg.Failure(description=f"{provider}: {failures[days[0]][0]}")
            result = parses[parse_reuse_key(provider, only["sha256"], only.get("page_date") or days[0])]
            assert isinstance(result, ParseResult)
            report = result.report
            yield dg.Output(
                {"result": result, "raw": only},
                metadata={
                    "offers": len(result.offers),
                    "parse_strategy": report.parse_strategy,
                    "rejected": len(report.rejected),
                    "unpriced_rows": report.unpriced_rows,
                    "unknown_gpus": ", ".join(report.unknown_gpus) or "none",
                    "missing_columns": ", ".join(report.missing_columns) or "none",
                    "preview": dg.MetadataValue.md(offers_markdown(result.offers)),
                },
            )
            yield from check_results
            return
        yield dg.Output(
            as_output(context, passed),
            metadata=_range_metadata(days, failures, {key[0] for key in parses}),
        )
        # A range holds back only its failing dates (recorded failed above, their snapshots kept):
        # what goes on to the snapshot step passed every check, so a failure here warns, naming
        # the dates, instead of blocking the whole range.
        for name in CHECKS:
            held = sorted(d for d, (error, _) in failures.items() if f"{name}: " in error)
            yield dg.AssetCheckResult(
                check_name=name,
                asset_key=provider_asset_key("parsed", provider),
                passed=not held,
                severity=dg.AssetCheckSeverity.WARN,
                description=f"{len(days) - len(held)} of {len(days)} dates passed"
                + (f"; held back: {', '.join(d.isoformat() for d in held[:20])}" if held else ""),
                metadata={"dates_held_back": len(held)},
            )

    @stage(
        "snapshot",
        {"parsed": "parsed"},
        kinds={"duckdb"},
        description=f"{provider}: the day's partition of price_snapshots (replaced in one transaction).",
    )
    def snapshot_partition(
        context: dg.AssetExecutionContext, parsed: Any, warehouse: WarehouseResource
    ) -> dg.MaterializeResult:
        days = partition_dates(context)
        loaded = {k: v for k, v in by_partition(context, parsed).items() if v is not None}
        by_source: dict[str, list[writes.SnapshotPartition]] = {}
        for key, value in sorted(loaded.items()):
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
        if len(days) == 1 and loaded:
            result: ParseResult = next(iter(loaded.values()))["result"]
            return dg.MaterializeResult(
                metadata={
                    "dagster/row_count": sum(counts.values()),
                    "warehouse_rows_total": total,
                    "quarantined": len(result.report.rejected),
                    "dagster/column_schema": SNAPSHOT_SCHEMA,
                    "cheapest": dg.MetadataValue.md(offers_markdown(result.offers, 5)),
                }
            )
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": sum(counts.values()),
                "warehouse_rows_total": total,
                "dates_loaded": len(counts),
            }
        )

    return [raw_page, parsed_offers, snapshot_partition]


# Dates per delete + insert transaction of a backfill: big enough to amortise the commit,
# small enough that an interrupted backfill keeps most of its work.
SNAPSHOT_BATCH_DATES = 366


def _batches(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _range_metadata(days: list[dt.date], failures: dict, distinct: set) -> dict:
    return {
        "dates": len(days),
        "first_date": days[0].isoformat(),
        "last_date": days[-1].isoformat(),
        "dates_failed": len(failures),
        "distinct_pages": len(distinct),
        "failed_dates": ", ".join(d.isoformat() for d in sorted(failures)[:20]) or "none",
    }


SNAPSHOT_SCHEMA = dg.TableSchema(
    columns=[
        dg.TableColumn("snapshot_date", "DATE"),
        dg.TableColumn("provider", "VARCHAR"),
        dg.TableColumn("sku", "VARCHAR"),
        dg.TableColumn("gpu", "VARCHAR", description="catalog slug or 'unknown'"),
        dg.TableColumn("gpu_raw", "VARCHAR"),
        dg.TableColumn("gpu_count", "INTEGER"),
        dg.TableColumn("tier", "VARCHAR", description="on_demand | spot | reserved"),
        dg.TableColumn("community", "BOOLEAN"),
        dg.TableColumn("commitment_months", "INTEGER"),
        dg.TableColumn("usd_per_gpu_hour", "DECIMAL(12,4)"),
        dg.TableColumn("usd_per_instance_hour", "DECIMAL(14,4)"),
        dg.TableColumn("effective_from", "DATE"),
        dg.TableColumn("price_basis", "VARCHAR", description="list | from | lowest_now"),
        dg.TableColumn("observed_on", "DATE", description="date of the page the price was read from"),
        dg.TableColumn("source_file", "VARCHAR", description="the page (URL, archive file) or imported file"),
        dg.TableColumn("source", "VARCHAR", description="scrape | archive | public_report"),
    ]
)

PROVIDER_ASSETS: dict[str, list[dg.AssetsDefinition]] = {p: build_provider_assets(p) for p in PROVIDERS}


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions(assets=[a for assets in PROVIDER_ASSETS.values() for a in assets])
