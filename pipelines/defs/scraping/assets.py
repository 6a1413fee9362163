"""Per provider: raw page -> parsed offers -> snapshot partition, as three assets of one step.

Each stage is its own asset, so the catalog shows where a failure happened: the raw page is kept
(and materialized) before parsing, the blocking checks sit on the parsed offers, and a page that
fails them never replaces yesterday's snapshot (the step fails after reporting them, the snapshot
is not materialized). The three share one step because handing a page and its parse from step to
step cost more than the work itself: a step's bookkeeping, a pickled value, a warehouse connection
each (a daily run had 30 provider steps). A failure is recorded in ``provider_runs`` (the provider
turns stale) and never stops the other providers, which have steps of their own.

Every step takes one date or, in a single-run backfill, a range of dates: the stages treat them
alike (``stages.py``); ``reporting.py`` says how a lone date and a range are shown to Dagster.

A range run of ``gpuprice backfill`` selects only each provider's snapshot asset (the step can be
subset): the step still collects, stores and parses every page, but Dagster stores a planned and
a done materialization per selected asset and date, one SQLite commit each, and the raw and
parsed stages were two thirds of those. So a backfilled date shows its snapshot (and model)
partitions filled; its raw and parsed stages keep the daily runs' materializations (a backfill's
pages and parse reports are in the warehouse: ``raw_pages``, ``provider_runs``).
"""

import contextlib
import datetime as dt
from collections.abc import Iterator

import dagster as dg

from gpuprice.pipelines.asset_keys import provider_asset_key, provider_step
from gpuprice.pipelines.defs.scraping.checks import check_specs
from gpuprice.pipelines.defs.scraping.reporting import step_report
from gpuprice.pipelines.defs.scraping.stages import StepRun, collect_stage, load_stage, parse_stage
from gpuprice.pipelines.partitions import daily_partitions
from gpuprice.pipelines.ranges import SINGLE_RUN, partition_dates
from gpuprice.pipelines.resources import WAREHOUSE_POOL, ScrapeSettings, WarehouseResource
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.warehouse.tables import columns

FETCH_RETRY = dg.RetryPolicy(
    max_retries=2, delay=30, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS
)
# Run tag that switches FETCH_RETRY off. `gpuprice run` sets it: the fetcher has already spent its
# retry budget (backoff, Retry-After), and re-running the step would triple the requests to a
# struggling site and keep the person at the terminal waiting 30-90 s per failing provider.
STEP_RETRIES_TAG = "gpuprice/step_retries"


def step_retries_allowed(context: dg.AssetExecutionContext) -> bool:
    return context.run.tags.get(STEP_RETRIES_TAG, "on") != "off"


@contextlib.contextmanager
def _not_retried(provider: str) -> Iterator[None]:
    """Failures inside fail the step without the retry policy (the cause stays attached)."""
    try:
        yield
    except dg.Failure as failure:
        if failure.allow_retries:
            raise dg.Failure(description=failure.description, allow_retries=False) from failure
        raise
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0]  # the run log's error stays one line
        raise dg.Failure(
            description=f"{provider}: {type(exc).__name__}: {first}", allow_retries=False
        ) from exc


# price_snapshots' columns (every one, from warehouse/sql/schema.sql), shown in the UI from the
# snapshot assets' definitions.
SNAPSHOT_SCHEMA = dg.TableSchema(
    columns=[
        dg.TableColumn(
            c.name,
            c.type,
            description=c.description or None,
            constraints=dg.TableColumnConstraints(nullable=c.nullable),
        )
        for c in columns("price_snapshots")
    ]
)


def _stage_specs(
    raw_key: dg.AssetKey, parsed_key: dg.AssetKey, snapshot_key: dg.AssetKey, provider: str
) -> list[dg.AssetSpec]:
    """The step's three assets: the stored page, the parsed offers, the snapshot partition."""
    return [
        dg.AssetSpec(
            raw_key,
            kinds={"python", "file"},
            description=f"{provider}: the pricing page for the day, stored gzipped and content-addressed before parsing.",
        ),
        # Skippable: a page that cannot be parsed, or fails a blocking check, stops here.
        dg.AssetSpec(
            parsed_key,
            deps=[raw_key],
            kinds={"python"},
            skippable=True,
            description=f"{provider}: offers parsed from the stored page, with the parse report (not yet published).",
        ),
        dg.AssetSpec(
            snapshot_key,
            deps=[parsed_key],
            kinds={"duckdb"},
            skippable=True,
            description=f"{provider}: the day's partition of price_snapshots (replaced in one transaction).",
            # On the definition, not on each materialization: the UI shows it all the same,
            # and each day's events no longer carry the same 6 KB of columns.
            metadata={"dagster/column_schema": SNAPSHOT_SCHEMA},
        ),
    ]


def build_provider_assets(provider: str) -> dg.AssetsDefinition:
    raw_key, parsed_key, snapshot_key = (
        provider_asset_key(s, provider) for s in ("raw", "parsed", "snapshot")
    )

    @dg.multi_asset(
        name=provider_step(provider),
        specs=_stage_specs(raw_key, parsed_key, snapshot_key, provider),
        check_specs=check_specs(provider),
        # A range run (gpuprice backfill) selects only the snapshot: see the module's docstring.
        can_subset=True,
        partitions_def=daily_partitions,
        backfill_policy=SINGLE_RUN,
        group_name="scraping",
        pool=WAREHOUSE_POOL,
        retry_policy=FETCH_RETRY,
    )
    def provider_stages(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource, scrape: ScrapeSettings
    ) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
        run = StepRun(
            provider=provider,
            days=partition_dates(context),
            source=scrape.source,
            run_id=context.run_id,
            started_at=dt.datetime.now(dt.UTC),
        )
        report = step_report(run, retries_allowed=step_retries_allowed(context))
        selected, checks = context.selected_asset_keys, context.selected_asset_check_keys
        with warehouse.session():  # the step's writes share one connection
            collected = collect_stage(run, warehouse, scrape)
            raw_metadata = report.raw(collected)
            if raw_key in selected:
                yield dg.MaterializeResult(asset_key=raw_key, metadata=raw_metadata)
            # The step's retry policy is for fetching: the page is stored now, and parsing it or
            # writing its partition again 30 s later would go the same way.
            with _not_retried(provider):
                checked = parse_stage(run, collected, warehouse)
                parsed_metadata = report.parsed(checked)
            if parsed_key in selected:
                yield dg.MaterializeResult(asset_key=parsed_key, metadata=parsed_metadata)
            yield from (
                r
                for r in report.checks(checked)
                if dg.AssetCheckKey(parsed_key, r.check_name or "") in checks
            )
            if not report.loads(checked):  # a lone date raises there: the snapshot stays
                return
            warning = report.warning(checked)
            if warning:
                context.log.warning(warning)
            with _not_retried(provider):
                loaded = load_stage(run, checked, warehouse)
                loaded_metadata = report.loaded(loaded, checked)
            if snapshot_key in selected:
                yield dg.MaterializeResult(asset_key=snapshot_key, metadata=loaded_metadata)

    return provider_stages


PROVIDER_ASSETS: dict[str, dg.AssetsDefinition] = {p: build_provider_assets(p) for p in PROVIDERS}


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions(assets=list(PROVIDER_ASSETS.values()))
