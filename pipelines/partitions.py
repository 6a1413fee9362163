"""Partitions shared by the asset graph."""

from __future__ import annotations

import dagster as dg

# Daily scrapes, weekly reports (Monday). Partitions start early enough for five years of
# backfilled history (the sample archive itself starts in 2025-05).
FIRST_DAY = "2020-01-01"
daily_partitions = dg.DailyPartitionsDefinition(start_date=FIRST_DAY, end_offset=1)
weekly_partitions = dg.WeeklyPartitionsDefinition(start_date="2019-12-30", day_offset=1, end_offset=1)
