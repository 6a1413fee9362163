"""The one staleness rule, shared by the SQL views, the warehouse queries, rankings and reports.

A price is as old as the page it was read from: its age is the date asked for minus
``observed_on`` (the page's own date), never minus the snapshot date a run filed it under
(a run for 2026-10-06 that replays Lambda's page of 2026-08-30 holds 37-day-old prices).

A provider is stale on a day when its newest successful observation at or before that day is
more than ``STALE_AFTER_DAYS`` old, when its latest attempt at or before the day failed, or when
it never succeeded. Offer views that pick "the cheapest" consider only prices observed within
``MAX_OFFER_AGE_DAYS`` of the day, so a price seen months ago cannot win a day it was not seen.
"""

from __future__ import annotations

import datetime as dt

# Days after which an observation (a provider's newest page) counts as stale: a daily scrape
# that missed one day is still current; two missed days is a broken scraper or a stale replay.
STALE_AFTER_DAYS = 2
# Oldest observation a best-offer view (cheapest_by_gpu, best_value_*, `gpuprice history`)
# still counts: two weeks covers public reports cited weekly and a scraper out for a week.
MAX_OFFER_AGE_DAYS = 14


def age_days(observed_on: dt.date | None, day: dt.date) -> int | None:
    """Whole days between the observation and the date asked for (None when never observed)."""
    return None if observed_on is None else (day - observed_on).days


def is_stale(last_observed_on: dt.date | None, day: dt.date, *, last_status: str | None = "success") -> bool:
    """The rule above, for one provider (or one offer: pass its observation and 'success')."""
    age = age_days(last_observed_on, day)
    return age is None or last_status != "success" or age > STALE_AFTER_DAYS


def stale_sql(observed_on: str, day: str, last_status: str = "'success'") -> str:
    """The same rule as a SQL boolean expression over column/expression names."""
    return (
        f"({observed_on} IS NULL OR {last_status} IS DISTINCT FROM 'success'"
        f" OR ({day}) - {observed_on} > {STALE_AFTER_DAYS})"
    )
