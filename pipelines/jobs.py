"""The code location's named jobs executed in this process (``JobDefinition.execute_in_process``),
each run's outcome read back as a :class:`JobRun`: ``gpuprice run`` and ``gpuprice backfill`` run
the schedule's jobs this way (``pipelines/orchestration.py``)."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from gpuprice.disk import NoSpace, full_disk_text_message
from gpuprice.errors import BadInput
from gpuprice.pipelines.asset_keys import provider_step, step_provider
from gpuprice.pipelines.defs.scraping.assets import STEP_RETRIES_TAG
from gpuprice.pipelines.instance import cli_run_tags
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.warehouse.connection import WarehouseBusy

CODE_LOCATION = "gpuprice.pipelines.definitions"
SCRAPE_JOB = "daily_scrape"
MODELS_JOB = "daily_models"
REPORTS_JOB = "weekly_reports_job"
REFERENCE_JOB = "reference_data"
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"
# The CLI prints its own progress: Dagster's console log stays quiet.
_QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


@dataclass
class JobRun:
    """One executed job: its run id, whether it succeeded, and each failed step's error."""

    job: str
    run_id: str
    success: bool
    failed_steps: dict[str, str] = field(default_factory=dict)  # step key -> first line of the error
    busy: str | None = None  # the first step that found the warehouse locked past the wait (its error)

    def stop_on_storage_failure(self, providers: Sequence[str], home: Path) -> None:
        """One line (exit 2 in the CLI) instead of a list of failed steps when the storage under
        the run failed it: WarehouseBusy when another process took the warehouse while the run was
        under way, NoSpace when the disk filled; naming the providers whose step landed before."""
        full = None
        if self.busy is None:
            full = next(
                (m for m in (full_disk_text_message(e, home) for e in self.failed_steps.values()) if m), None
            )
            if full is None:
                return
        landed = [p for p in providers if provider_step(p) not in self.failed_steps]
        if self.job != SCRAPE_JOB:
            place = f"the providers landed, {self.job} did not finish"
        else:
            rest = [p for p in providers if p not in landed]
            place = f"landed: {', '.join(landed) or 'none'}; not landed: {', '.join(rest) or 'none'}"
        if full is not None:
            raise NoSpace(f"{full}; the run stopped ({place})")
        raise WarehouseBusy(f"{self.busy}; the run stopped ({place})")


def load_code_location() -> dg.Definitions:
    """The code location's definitions; BadInput naming the module and the cause when it fails to load."""
    try:
        from gpuprice.pipelines.definitions import defs
    except BadInput:
        raise
    except Exception as exc:
        cause: BaseException = exc
        while cause.__cause__ is not None:
            cause = cause.__cause__
        if isinstance(cause, BadInput):
            raise cause from None
        detail = (str(cause).strip().splitlines() or [""])[0]
        raise BadInput(
            f"the Dagster code location {CODE_LOCATION} failed to load: {type(cause).__name__}: {detail}"
        ) from None
    return defs


def cli_definitions(resources: Mapping[str, Any]) -> dg.Definitions:
    """The code location's assets, checks and jobs, bound to the CLI's resources (its --source)."""
    defs = load_code_location()
    return dg.Definitions(
        assets=defs.assets, asset_checks=defs.asset_checks, jobs=defs.jobs, resources=dict(resources)
    )


def execute_job(
    definitions: dg.Definitions,
    job: str,
    *,
    instance: dg.DagsterInstance,
    partition_key: str | None = None,
    partition_range: tuple[str, str] | None = None,
    asset_selection: Sequence[dg.AssetKey] | None = None,
) -> JobRun:
    """Execute the job ``job`` in this process for one partition or a range; never raises for a
    failed step (the run records it). No step retries: the fetcher already retried, and nobody at
    a terminal should wait 30-90 s more."""
    tags = {STEP_RETRIES_TAG: "off", **cli_run_tags()}
    if partition_range is not None:
        tags |= {RANGE_START_TAG: partition_range[0], RANGE_END_TAG: partition_range[1]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.getLogger("dagster").setLevel(logging.ERROR)
        result = definitions.resolve_job_def(job).execute_in_process(
            run_config=_QUIET,
            instance=instance,
            partition_key=partition_key,
            asset_selection=asset_selection,
            tags=tags,
            raise_on_error=False,
        )
    failed, busy = _failed_steps(result)
    return JobRun(job=job, run_id=result.run_id, success=result.success, failed_steps=failed, busy=busy)


def _failed_steps(result: dg.ExecuteInProcessResult) -> tuple[dict[str, str], str | None]:
    """Each failed step's first error line, and the first WarehouseBusy among them (or None)."""
    failed = {}
    busy = None
    for event in result.get_step_failure_events():
        error = event.step_failure_data.error
        while error is not None and error.cause is not None:  # the user's exception, not Dagster's wrapper
            error = error.cause
        message = (error.message if error is not None else "").strip()
        failed[event.step_key or ""] = message.splitlines()[0] if message else "failed"
        if busy is None and error is not None and error.cls_name == WarehouseBusy.__name__:
            busy = message.splitlines()[0].removeprefix(
                f"{WarehouseBusy.__module__}.{WarehouseBusy.__name__}: "
            )
    return failed, busy


def other_errors(runs: Sequence[JobRun]) -> list[str]:
    """Failed steps outside the providers' own steps (reference data, models, publishing, reports)."""
    return [
        f"{run.job}: {step}: {message}"
        for run in runs
        for step, message in run.failed_steps.items()
        if step_provider(step, PROVIDERS) is None
    ]
