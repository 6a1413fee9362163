"""Jobs, schedules and sensors.

The daily run is two jobs: the reference data (GPU catalog, public price history, memory-fit
sweep) with the providers' scrape (06:00 UTC) in one run, as ``gpuprice run`` does (each run
costs a process start and a code-location load, ~2.5 s, so a third run per day would make the
scheduled path over 2x the CLI's time), then the models and publishing job, started by a sensor when the scrape run ends, whether it succeeded or some provider
failed: one provider's failure must not stop rankings and the analysts' copy for the others.
"""

import dagster as dg

from gpuprice.pipelines.asset_keys import MODEL_ASSETS, REFERENCE_ASSETS
from gpuprice.pipelines.partitions import daily_partitions

# Nothing in the scrape depends on the reference data or the other way round: a failure in one
# leaves the other to land.
SCRAPE_SELECTION = dg.AssetSelection.groups("scraping") | dg.AssetSelection.assets(*REFERENCE_ASSETS)
DOWNSTREAM_SELECTION = dg.AssetSelection.assets(*MODEL_ASSETS)

daily_scrape_job = dg.define_asset_job(
    "daily_scrape",
    selection=SCRAPE_SELECTION,
    partitions_def=daily_partitions,
    description="Reload the GPU catalog, public history and memory-fit sweep; fetch, store, parse and "
    "check every provider's pricing page; write the day's snapshots.",
)
daily_models_job = dg.define_asset_job(
    "daily_models",
    selection=DOWNSTREAM_SELECTION,
    partitions_def=daily_partitions,
    description="Offers with specs, workload rankings and the published analytics copy for the day.",
)
reference_job = dg.define_asset_job(
    "reference_data",
    selection=dg.AssetSelection.assets(*REFERENCE_ASSETS),
    # Run by hand after a catalog edit, or by the models sensor when dim_gpu never ran.
    description="GPU catalog, public price history and the memory-fit sweep (also part of daily_scrape).",
)
weekly_reports_job = dg.define_asset_job(
    "weekly_reports_job",
    selection=dg.AssetSelection.assets("weekly_reports"),
    description="Weekly cost reports (HTML + Markdown) for the week that just ended.",
)

daily_scrape_schedule = dg.build_schedule_from_partitioned_job(
    daily_scrape_job, hour_of_day=6, minute_of_hour=0, name="daily_scrape_0600_utc"
)
weekly_reports_schedule = dg.build_schedule_from_partitioned_job(
    weekly_reports_job, hour_of_day=7, minute_of_hour=0, name="weekly_reports_monday_0700_utc"
)


def reference_data_missing(instance: dg.DagsterInstance) -> bool:
    """True when dim_gpu was never materialized on this instance (the reference job never ran)."""
    return instance.get_latest_materialization_event(dg.AssetKey("dim_gpu")) is None


def _models_request(context: dg.RunStatusSensorContext) -> list[dg.RunRequest]:
    partition = context.dagster_run.tags.get("dagster/partition")
    if not partition:
        return []
    if reference_data_missing(context.instance):
        # Without the catalog the models run would rank nothing and the catalog check would fail:
        # load the reference data first; models_after_reference starts the models for this partition.
        return [
            dg.RunRequest(
                run_key=f"reference-before-{partition}-{context.dagster_run.run_id}",
                job_name=reference_job.name,
                tags={MODELS_PARTITION_TAG: partition},
            )
        ]
    return [
        dg.RunRequest(
            run_key=f"models-{partition}-{context.dagster_run.run_id}",
            partition_key=partition,
            job_name=daily_models_job.name,
        )
    ]


# Set on a reference run started for a waiting models run: the partition that run is for.
MODELS_PARTITION_TAG = "gpuprice/models_partition"


@dg.run_status_sensor(
    run_status=dg.DagsterRunStatus.SUCCESS,
    monitored_jobs=[reference_job],
    request_job=daily_models_job,
    name="models_after_reference",
)
def models_after_reference(context: dg.RunStatusSensorContext):
    partition = context.dagster_run.tags.get(MODELS_PARTITION_TAG)
    if not partition:
        return None  # a scheduled reference run: the scrape's own sensor starts the models
    return dg.RunRequest(run_key=f"models-{partition}-{context.dagster_run.run_id}", partition_key=partition)


@dg.run_status_sensor(
    run_status=dg.DagsterRunStatus.SUCCESS,
    monitored_jobs=[daily_scrape_job],
    request_jobs=[reference_job, daily_models_job],
    name="models_after_scrape_success",
)
def models_after_scrape_success(context: dg.RunStatusSensorContext):
    return _models_request(context)


@dg.run_status_sensor(
    run_status=dg.DagsterRunStatus.FAILURE,
    monitored_jobs=[daily_scrape_job],
    request_jobs=[reference_job, daily_models_job],
    name="models_after_scrape_failure",
)
def models_after_scrape_failure(context: dg.RunStatusSensorContext):
    return _models_request(context)


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions(
        jobs=[daily_scrape_job, daily_models_job, reference_job, weekly_reports_job],
        schedules=[daily_scrape_schedule, weekly_reports_schedule],
        sensors=[models_after_scrape_success, models_after_scrape_failure, models_after_reference],
        # Every step writes to the one DuckDB file in turn (pool of 1), so a process per step
        # (the multiprocess default) buys no parallelism and costs an interpreter start and a
        # code-location load per step: 18+ of them made one UI partition ~10x the CLI's time.
        executor=dg.in_process_executor,
    )
