"""Reference data: the GPU spec catalog (dim_gpu) and cited public price observations."""

import dagster as dg

from gpuprice.pipelines.metadata import frame_markdown
from gpuprice.pipelines.resources import WAREHOUSE_POOL, WarehouseResource
from gpuprice.warehouse import history_writes, writes


@dg.asset(
    key="dim_gpu",
    group_name="catalog",
    kinds={"duckdb"},
    pool=WAREHOUSE_POOL,
    description="GPU spec catalog (models/gpu_catalog.csv): memory, bandwidth, dense TFLOPS, form factor, NVLink, ECC.",
)
def dim_gpu(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    from gpuprice.models.catalog import CATALOG_VERSION, load_gpu_catalog

    catalog = load_gpu_catalog()
    with warehouse.open() as con:
        count = writes.replace_dim_gpu(con, catalog)
    preview = frame_markdown(catalog[["slug", "memory_gb", "dense_bf16_tflops", "form_factor"]], limit=50)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": count,
            "catalog_version": CATALOG_VERSION,
            "preview": dg.MetadataValue.md(preview),
        }
    )


@dg.asset(
    key="public_price_observations",
    group_name="catalog",
    kinds={"duckdb"},
    pool=WAREHOUSE_POOL,
    deps=["dim_gpu"],
    description="Cited public price observations (2022 on) loaded as source='public_report' history.",
)
def public_price_observations(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    from gpuprice.scrapers.observations import BUNDLED_OBSERVATIONS, load_observations

    frame, quarantined = load_observations(BUNDLED_OBSERVATIONS)
    with warehouse.open() as con:
        # Only the bundled rows are replaced: rows a user imported stay (see history_writes.PUBLIC_REPORT_KEY).
        count = history_writes.replace_bundled_public_reports(con, frame, quarantined)
    return dg.MaterializeResult(metadata={"dagster/row_count": count, "quarantined": len(quarantined)})


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions(assets=[dim_gpu, public_price_observations])
