"""Downstream of the day's snapshots: offers joined with GPU specs, memory fit, rankings."""

import dagster as dg

from gpuprice.pipelines import progress
from gpuprice.pipelines.asset_keys import provider_asset_key
from gpuprice.pipelines.metadata import frame_markdown
from gpuprice.pipelines.partitions import daily_partitions
from gpuprice.pipelines.ranges import SINGLE_RUN, partition_dates, previews
from gpuprice.pipelines.resources import WAREHOUSE_POOL, WarehouseResource, WorkloadCatalog
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.warehouse import queries, writes

SNAPSHOT_KEYS = [provider_asset_key("snapshot", p) for p in PROVIDERS]


@dg.asset(
    key="offers_with_specs",
    partitions_def=daily_partitions,
    backfill_policy=SINGLE_RUN,
    deps=[*SNAPSHOT_KEYS, "dim_gpu"],
    group_name="modeling",
    kinds={"duckdb"},
    pool=WAREHOUSE_POOL,
    description="Every offer of the day joined with dim_gpu: $/PFLOP-hour, $/GB-hour, $/TB/s-hour, interconnect "
    "(view analytics.offers_with_specs).",
)
def offers_with_specs(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    days = partition_dates(context)
    day = days[-1]
    with warehouse.open() as con:
        count, top = queries.offers_with_specs_summary(con, days[0], day)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": count,
            **previews(context, {"top5_usd_per_pflop_hour": dg.MetadataValue.md(frame_markdown(top))}),
        }
    )


@dg.asset_check(
    asset=offers_with_specs,
    name="every_offer_gpu_in_catalog",
    description="Every priced offer's GPU slug is in dim_gpu; unknown ones are listed in analytics.unknown_gpus.",
    blocking=False,
)
def every_offer_gpu_in_catalog(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    days = partition_dates(context)
    with warehouse.open() as con:
        catalog_size = queries.catalog_size(con)
        missing = queries.offers_missing_from_catalog(con, days[0], days[-1])
    if catalog_size == 0:
        # Not a naming problem: the reference data never ran (a UI-only deployment, say).
        return dg.AssetCheckResult(
            passed=False,
            description="dim_gpu is empty: the GPU catalog was never loaded; materialize dim_gpu "
            "(job reference_data, or its schedule) and re-run this check",
            metadata={"missing": len(missing), "dim_gpu_rows": 0},
        )
    names = ", ".join(f"{r.provider}: {r.gpu_raw} ({r.gpu})" for r in missing.head(10).itertuples())
    return dg.AssetCheckResult(
        passed=missing.empty,
        description="all GPUs known"
        if missing.empty
        else f"{len(missing)} offers with GPUs not in the catalog: {names}",
        metadata={"missing": len(missing)},
    )


@dg.asset(
    key="memory_fit",
    deps=["dim_gpu"],
    group_name="modeling",
    kinds={"duckdb", "numpy"},
    pool=WAREHOUSE_POOL,
    description="Memory-fit sweep: every workload x GPU x count x sharding strategy, with the least complex fit.",
)
def memory_fit(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, workload_catalog: WorkloadCatalog
) -> dg.MaterializeResult:
    from gpuprice.models.fit_table import memory_fit_table

    table = memory_fit_table(workload_catalog.load())
    with warehouse.open() as con:
        count = writes.replace_memory_fit(con, table)
    fits = table[table["least_complex"]]
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": count,
            "configurations_that_fit": int(table["fits"].sum()),
            "least_complex_preview": dg.MetadataValue.md(
                frame_markdown(fits[["workload", "gpu", "gpu_count", "sharding", "per_gpu_gb"]], 15)
            ),
        }
    )


@dg.asset(
    key="workload_rankings",
    partitions_def=daily_partitions,
    backfill_policy=SINGLE_RUN,
    deps=[*SNAPSHOT_KEYS, "memory_fit", "dim_gpu"],
    group_name="modeling",
    kinds={"duckdb", "pandas"},
    pool=WAREHOUSE_POOL,
    description="Per workload: every offer of the day that fits, ranked by cost per successful checkpoint.",
)
def workload_rankings(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, workload_catalog: WorkloadCatalog
) -> dg.MaterializeResult:
    from gpuprice.models.ranking import rank_offers

    days = partition_dates(context)
    workloads = workload_catalog.load()
    count = 0
    with warehouse.open() as con:
        for batch in [days[i : i + RANKING_BATCH_DATES] for i in range(0, len(days), RANKING_BATCH_DATES)]:
            offers_by_day = queries.offers_as_of_range(con, batch[0], batch[-1])
            stale_by_day = queries.stale_providers_range(con, batch[0], batch[-1])
            ranked_by_day = {
                # include_stale: older prices are kept, ranked last and marked (excluded_by
                # 'price_age'), for the reports' "older observations"; never recommended.
                day: rank_offers(
                    offers_by_day[day], workloads, day, stale_providers=stale_by_day[day], include_stale=True
                )
                for day in batch
            }
            stale = stale_by_day[batch[-1]]
            count += writes.replace_rankings_many(con, ranked_by_day)
            progress.advance("rankings", len(batch))
    ranked = ranked_by_day[days[-1]]
    best = ranked[ranked["rank"] == 1][
        ["workload", "provider", "gpu", "gpu_count", "tier", "cost_per_checkpoint_usd"]
    ]
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": count,
            "dates": len(days),
            "workloads": len(workloads),
            "stale_providers": ", ".join(sorted(stale)) or "none",
            **previews(context, {"best_per_workload": dg.MetadataValue.md(frame_markdown(best, 30))}),
        }
    )


# Dates of rankings per delete + insert transaction (about 500 rows a date).
RANKING_BATCH_DATES = 31


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions(
        assets=[offers_with_specs, memory_fit, workload_rankings], asset_checks=[every_offer_gpu_in_catalog]
    )
