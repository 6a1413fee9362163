"""The code location the Dagster services test serves: gpuprice's own, plus one test-only schedule
that fires every minute and requests ``daily_scrape`` for one partition (its run key makes it one
run however many ticks come). The product's 06:00 UTC schedule would not tick during a test.
"""

from __future__ import annotations

import os

import dagster as dg

from gpuprice.pipelines import definitions as product_location
from gpuprice.pipelines.defs.schedules import daily_scrape_job

TICK_PARTITION = os.environ["GPUPRICE_TEST_TICK_PARTITION"]


@dg.schedule(
    job=daily_scrape_job,
    cron_schedule="* * * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    name="test_every_minute",
)
def every_minute(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    return dg.RunRequest(run_key=f"tick-{TICK_PARTITION}", partition_key=TICK_PARTITION)


defs = dg.Definitions.merge(product_location.defs, dg.Definitions(schedules=[every_minute]))
