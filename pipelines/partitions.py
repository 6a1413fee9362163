"""Partitions shared by the asset graph."""

from __future__ import annotations

import dagster as dg

# The sample archive starts in 2025-05; scrapes are daily, reports weekly (Monday).
FIRST_DAY = "2025-05-01"
daily_partitions = dg.DailyPartitionsDefinition(start_date=FIRST_DAY, end_offset=1)
weekly_partitions = dg.WeeklyPartitionsDefinition(start_date="2025-05-05", day_offset=1, end_offset=1)
