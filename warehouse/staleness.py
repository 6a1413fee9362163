"""The one staleness rule, shared by the SQL views, the warehouse queries, rankings and reports.

A price is as old as the page it was read from: its age is the date asked for minus
``observed_on`` (the page's own date), never minus the snapshot date a run filed it under
(a run for 2026-10-06 that replays Lambda's page of 2026-08-30 holds 37-day-old prices).

A provider is stale on a day when its newest successful observation at or before that day is
more than ``STALE_AFTER_DAYS`` old, when its latest attempt at or before the day failed, or when
it never succeeded.

"Now" for prices (one rule, every output): a price is **current** for a day when it is in force
on that day and its page was observed at most ``MAX_PRICE_AGE_DAYS`` days before it (default 14;
``rank --max-price-age-days`` and ``history --max-age-days`` change it per command). Only
current prices are recommended: `run`'s summary, `rank`, `estimate`'s market price, `history`,
the analytics best/cheapest views and the reports. Older prices are shown apart, with their age.
"""

from __future__ import annotations

import datetime as dt

# Days after which an observation (a provider's newest page) counts as stale: a daily scrape
# that missed one day is still current; two missed days is a broken scraper or a stale replay.
STALE_AFTER_DAYS = 2
# Oldest page a current price may come from (the one setting): two weeks covers public reports
# cited weekly and a scraper out for a week.
MAX_PRICE_AGE_DAYS = 14
MAX_OFFER_AGE_DAYS = MAX_PRICE_AGE_DAYS  # the earlier name of the same setting
# The ranking's ``excluded_by`` code of an offer whose price is not current.
PRICE_AGE = "price_age"


def age_days(observed_on: dt.date | None, day: dt.date) -> int | None:
    """Whole days between the observation and the date asked for (None when never observed)."""
    return None if observed_on is None else (day - observed_on).days


def is_current(observed_on: dt.date | None, day: dt.date, max_age_days: int = MAX_PRICE_AGE_DAYS) -> bool:
    """The rule above for one in-force price: its page at most ``max_age_days`` before ``day``.

    A page dated after ``day`` (a scheduled price read later) counts as age 0."""
    age = age_days(observed_on, day)
    return age is not None and age <= max_age_days


def current_sql(age: str, max_age_days: int | str = MAX_PRICE_AGE_DAYS) -> str:
    """The same rule as a SQL boolean over an age-in-days expression (``max_age_days``: a number
    or a bound parameter such as ``?``)."""
    return f"(({age}) IS NOT NULL AND ({age}) <= {max_age_days})"


def is_stale(last_observed_on: dt.date | None, day: dt.date, *, last_status: str | None = "success") -> bool:
    """The rule above, for one provider (or one offer: pass its observation and 'success')."""
    age = age_days(last_observed_on, day)
    return age is None or last_status != "success" or age > STALE_AFTER_DAYS
