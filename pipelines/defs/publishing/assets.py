"""Publishing: the analysts' copy, the Parquet export, and the weekly reports."""

import dagster as dg

from gpuprice.pipelines import progress
from gpuprice.pipelines.partitions import daily_partitions, weekly_partitions
from gpuprice.pipelines.ranges import SINGLE_RUN, partition_dates
from gpuprice.pipelines.resources import WAREHOUSE_POOL, WarehouseResource, WorkloadCatalog
from gpuprice.warehouse.publish import export_parquet, publish_analytics_copy
from gpuprice.warehouse.queries import latest_prices_count


@dg.asset(
    key="analytics_copy",
    partitions_def=daily_partitions,
    backfill_policy=SINGLE_RUN,
    deps=["offers_with_specs", "workload_rankings"],
    group_name="publishing",
    kinds={"duckdb", "parquet"},
    pool=WAREHOUSE_POOL,
    description="analytics.duckdb, replaced atomically for analysts, and exports/price_snapshots/snapshot_date=*/ Parquet.",
)
def analytics_copy(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    days = partition_dates(context)
    home = warehouse.home_path
    with warehouse.open() as con:
        written = export_parquet(con, days, home / "exports")
        progress.advance("export", len(days))
        target = publish_analytics_copy(con, warehouse.database_path, home / "analytics.duckdb")
        latest = latest_prices_count(con)
    return dg.MaterializeResult(
        metadata={
            "analytics_copy": dg.MetadataValue.path(str(target)),
            "parquet_files": len(written),
            "latest_prices_rows": latest,
        }
    )


@dg.asset(
    key="weekly_reports",
    partitions_def=weekly_partitions,
    backfill_policy=SINGLE_RUN,
    deps=["analytics_copy"],
    group_name="publishing",
    kinds={"html", "markdown"},
    description="Weekly cost reports per workload under $GPUPRICE_HOME/reports/<YYYY-Www>/.",
)
def weekly_reports(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, workload_catalog: WorkloadCatalog
) -> dg.MaterializeResult:
    from gpuprice.reports.render import render_weekly_reports

    paths = []
    catalog = {w.name: w for w in workload_catalog.load()}
    for start in partition_dates(context):  # one week, or every week of a backfill's range
        year, week, _ = start.isocalendar()
        paths += render_weekly_reports(
            week=f"{year}-W{week:02d}",
            analytics_file=warehouse.home_path / "analytics.duckdb",
            out_root=warehouse.home_path / "reports",
            catalog=catalog,
        )
        progress.advance("reports", 1)
    return dg.MaterializeResult(
        metadata={"files": len(paths), "index": dg.MetadataValue.path(str(paths[0]) if paths else "")}
    )


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions(assets=[analytics_copy, weekly_reports])
