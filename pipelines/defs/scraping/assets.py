"""Per provider: raw page -> parsed offers -> snapshot partition.

Each stage is its own asset so a failure is visible where it happened, the raw page is kept
before parsing, and blocking checks on the parsed offers stop a bad page from replacing
yesterday's snapshot. A failure is recorded in ``provider_runs`` (the provider turns stale)
and never stops the other providers.
"""

import datetime as dt
import functools
from typing import Any

import dagster as dg

from gpuprice.pipelines.defs.scraping.checks import baseline_offer_count, check_specs, evaluate_checks
from gpuprice.pipelines.defs.scraping.connections import step_connection
from gpuprice.pipelines.partitions import daily_partitions
from gpuprice.pipelines.resources import WAREHOUSE_POOL, ScrapeSettings, WarehouseResource
from gpuprice.scrapers.offer import PROVIDERS, Offer, ParseResult, StructureMissing
from gpuprice.scrapers.registry import parse_page, provider_parser
from gpuprice.sources import SNAPSHOT_SOURCE_OF
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


def partition_date(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> dt.date:
    return dt.date.fromisoformat(context.partition_key)


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
    with step_connection(warehouse) as con:
        writes.record_provider_run(
            con,
            provider=provider,
            snapshot_date=snapshot_date,
            source=source,
            status="failed",
            offers=0,
            report=report,
            error=error[:2000],
            started_at=started_at or dt.datetime.now(dt.UTC),
        )


def _collect(
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
        daily, in the scraping group and the warehouse pool."""
        ins = {arg: dg.AssetIn(key=dg.AssetKey([up, provider])) for arg, up in (upstream or {}).items()}
        return dg.asset(
            key=dg.AssetKey([name, provider]),
            ins=ins or None,
            partitions_def=daily_partitions,
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
    def raw_page(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource, scrape: ScrapeSettings
    ) -> dict:
        day = partition_date(context)
        started = dt.datetime.now(dt.UTC)
        parser_version = provider_parser(provider).PARSER_VERSION
        try:
            pages = _collect(provider, day, scrape, warehouse, parser_version)
        except Exception as exc:  # any fetch failure: record it, keep yesterday's data, fail this asset
            record_failure(
                warehouse,
                provider=provider,
                snapshot_date=day,
                source=scrape.source,
                error=f"fetch failed: {exc}",
                started_at=started,
            )
            # Archive pages do not come back on retry; live fetches may (the fetcher already retried).
            raise dg.Failure(
                description=f"{provider}: fetch failed: {exc}",
                allow_retries=scrape.source == "live" and step_retries_allowed(context),
            ) from exc
        with step_connection(warehouse) as con:
            for page in pages:
                writes.record_raw_page(con, page.raw.model_dump())
        collected = pages[-1]
        raw = collected.raw.model_dump()
        context.add_output_metadata(
            {
                "url": raw["url"],
                "bytes": raw["bytes"],
                "sha256": raw["sha256"],
                "stored_path": dg.MetadataValue.path(raw["stored_path"]),
                "http_status": raw.get("http_status"),
                "pages_fetched": len(pages),
            }
        )
        # The page's own date: a replayed recording may be older than the partition (never newer).
        return {
            **raw,
            "source": scrape.source,
            "started_at": started,
            "notes": list(collected.notes),
            "page_date": collected.page_date,
        }

    @stage(
        "parsed",
        {"raw_page": "raw"},
        kinds={"python"},
        description=f"{provider}: offers parsed from the stored page, with the parse report (not yet published).",
        check_specs=check_specs(provider),
    )
    def parsed_offers(context: dg.AssetExecutionContext, raw_page: dict, warehouse: WarehouseResource):
        from gpuprice.scrapers.rawstore import read_raw

        day = partition_date(context)
        fail = functools.partial(
            record_failure,
            warehouse,
            provider=provider,
            snapshot_date=day,
            source=raw_page["source"],
            started_at=raw_page.get("started_at"),
        )
        try:
            body = read_raw(raw_page["stored_path"])
        except (OSError, ValueError) as exc:  # damaged or missing stored page: this provider fails, visibly
            fail(error=f"stored page unreadable: {exc}")
            raise dg.Failure(description=f"{provider}: stored page unreadable: {exc}") from exc
        try:
            # Scheduled prices ("Effective October 1") are read against the page's own date.
            result: ParseResult = parse_page(provider, body, observed_on=raw_page.get("page_date", day))
        except StructureMissing as exc:
            fail(error=f"parse failed: {exc}", report=exc.report)
            raise dg.Failure(description=f"{provider}: {exc}") from exc
        except Exception as exc:
            fail(error=f"parser crashed: {type(exc).__name__}: {exc}")
            raise
        report = result.report
        for note in raw_page.get("notes") or ():
            if note not in report.notes:
                report.notes.append(note)
        check_results, failures = evaluate_checks(
            provider, result, baseline_offer_count(warehouse, provider, day, len(result.offers))
        )
        if failures:
            fail(error="check failed: " + "; ".join(failures), report=report)
        yield dg.Output(
            {"result": result, "raw": raw_page},
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

    @stage(
        "snapshot",
        {"parsed": "parsed"},
        kinds={"duckdb"},
        description=f"{provider}: the day's partition of price_snapshots (replaced in one transaction).",
    )
    def snapshot_partition(
        context: dg.AssetExecutionContext, parsed: dict[str, Any], warehouse: WarehouseResource
    ) -> dg.MaterializeResult:
        day = partition_date(context)
        result: ParseResult = parsed["result"]
        raw = parsed["raw"]
        with step_connection(warehouse) as con:
            count = writes.replace_snapshot_partition(
                con,
                provider=provider,
                snapshot_date=day,
                offers=result.offers,
                source=SNAPSHOT_SOURCE_OF[raw["source"]],
                raw_sha256=raw["sha256"],
                parser_version=raw.get("parser_version"),
                report=result.report,
                started_at=raw.get("started_at"),
                observed_on=raw.get("page_date", day),
                source_file=raw.get("url"),
            )
            total = snapshot_row_count(con)
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": count,
                "warehouse_rows_total": total,
                "quarantined": len(result.report.rejected),
                "dagster/column_schema": SNAPSHOT_SCHEMA,
                "cheapest": dg.MetadataValue.md(offers_markdown(result.offers, 5)),
            }
        )

    return [raw_page, parsed_offers, snapshot_partition]


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
