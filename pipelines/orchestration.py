"""One orchestration for the schedule, ``gpuprice run`` and ``gpuprice backfill``: the code
location's named jobs, on the instance under ``$GPUPRICE_HOME/dagster``.

A scheduled day is ``daily_scrape`` for the day's partition (reference data and every provider),
then ``daily_models`` (the models sensor starts it when the scrape run ends, succeeded or
failed), and ``weekly_reports_job`` for the week. ``gpuprice run`` executes the same jobs for the
same partition, one after the other, in this process (``JobDefinition.execute_in_process``), so
its runs show in the UI under those job names; ``gpuprice backfill`` executes them over a
partition range, each as one run (every partitioned asset has ``BackfillPolicy.single_run()``,
as a backfill launched from the UI), after ``reference_data`` once, with only the providers'
snapshots selected in the scrape (Dagster stores a planned and a done event per selected asset
and date, and five years of raw and parsed stages tripled them). A provider's outcome is what the
scrape run recorded in the warehouse's ``provider_runs`` under its run id.

The parts: ``jobs`` (executing a named job, its :class:`JobRun`), ``day_run`` (one day),
``backfill_run`` (a range), ``run_records`` (what a scrape run recorded); this module names them.
"""

from __future__ import annotations

from gpuprice.pipelines.backfill_run import (
    BackfillSummary,
    ProviderBackfill,
    date_range,
    run_backfill,
    weeks_touched,
)
from gpuprice.pipelines.day_run import ProviderOutcome, RunSummary, run_day
from gpuprice.pipelines.jobs import JobRun, cli_definitions, execute_job, load_code_location

__all__ = [
    "BackfillSummary",
    "JobRun",
    "ProviderBackfill",
    "ProviderOutcome",
    "RunSummary",
    "cli_definitions",
    "date_range",
    "execute_job",
    "load_code_location",
    "run_backfill",
    "run_day",
    "weeks_touched",
]
