"""Partitions shared by the asset graph: daily snapshots, weekly reports (Monday).

The daily partitions start where the data starts: ``FIRST_DAY``, 2025-05-01 (the month of the
sample archive's earliest recorded page), or ``GPUPRICE_FIRST_DAY`` for an archive that starts
elsewhere; the weekly ones on that week's Monday. Both end tomorrow (UTC), so that a scheduled
day's partition exists when its run starts.
"""

from __future__ import annotations

import datetime as dt

import dagster as dg

from gpuprice.errors import BadInput
from gpuprice.settings import FIRST_DAY_VAR, Settings

FIRST_DAY: dt.date = Settings.first_day()
FIRST_MONDAY: dt.date = FIRST_DAY - dt.timedelta(days=FIRST_DAY.weekday())
daily_partitions = dg.DailyPartitionsDefinition(start_date=FIRST_DAY.isoformat(), end_offset=1)
weekly_partitions = dg.WeeklyPartitionsDefinition(
    start_date=FIRST_MONDAY.isoformat(), day_offset=1, end_offset=1
)


def check_in_range(first: dt.date, last: dt.date, option: str) -> None:
    """BadInput naming ``option`` when the dates ``first``..``last`` reach outside the daily
    partitions (from FIRST_DAY to today, UTC)."""
    today = dt.datetime.now(dt.UTC).date()
    if first < FIRST_DAY:
        raise BadInput(
            f"{option} {first} is before the first snapshot date {FIRST_DAY} (where the data starts;"
            f" {FIRST_DAY_VAR} moves it); valid: {FIRST_DAY} to {today}"
        )
    if last > today:
        raise BadInput(
            f"{option} {last} is in the future (today is {today} UTC); valid: {FIRST_DAY} to {today}"
        )
