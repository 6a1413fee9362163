"""One GPU's price as a series a person can trust: one row per day of a window.

Built on ``queries.price_history_series`` (each provider's current list price per day, the
last observation carried forward while its page is at most the price-age limit old,
warehouse/staleness.py). Every day of the window is a row, also a day without any current
price; the cheapest is chosen among current prices only, and a row says when the set of
providers behind that day's prices changed (a provider whose page passed the limit leaves,
one with a new page joins), so a jump caused by providers leaving is not read as a price move.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import duckdb

from gpuprice.warehouse.sql_files import sql

# What a day without any current price says, in the table and in JSON/CSV's ``reason``.
NO_CURRENT_PRICE = "no current price"


@dataclass(frozen=True)
class ProviderPrice:
    """One provider's current price on one day and the age of the page it comes from."""

    provider: str
    usd_per_gpu_hour: float
    age_days: int
    gpu_count: int
    source: str | None = None


@dataclass(frozen=True)
class SeriesDay:
    """One day of the window: every provider's current price, the cheapest, and who joined/left."""

    date: dt.date
    prices: dict[str, ProviderPrice]
    cheapest: ProviderPrice | None
    joined: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # the day's records, by provider

    @property
    def providers_changed(self) -> bool:
        return bool(self.joined or self.left)

    @property
    def providers_change(self) -> str:
        """The providers that joined and left the day's current prices: ``+lambda -azure``."""
        return " ".join([*(f"+{p}" for p in self.joined), *(f"-{p}" for p in self.left)])


def _day(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):  # pandas Timestamps too
        return value.date()
    return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value)[:10])


def series_days(records: list[dict[str, Any]], start: dt.date, end: dt.date) -> list[SeriesDay]:
    """Every day from ``start`` to ``end`` from the history's per-provider rows (``records``: dicts
    with date (ISO text or date), provider, usd_per_gpu_hour, age_days, gpu_count, cheapest)."""
    by_day: dict[dt.date, dict[str, dict[str, Any]]] = {}
    for r in records:
        day = _day(r["date"])
        by_day.setdefault(day, {})[r["provider"]] = r
    days: list[SeriesDay] = []
    previous: set[str] | None = None
    for n in range((end - start).days + 1):
        day = start + dt.timedelta(days=n)
        rows = by_day.get(day, {})
        prices = {
            p: ProviderPrice(
                p, float(r["usd_per_gpu_hour"]), int(r["age_days"]), int(r["gpu_count"]), r.get("source")
            )
            for p, r in sorted(rows.items())
        }
        best = min(prices.values(), key=lambda x: (x.usd_per_gpu_hour, x.provider), default=None)
        now = set(prices)
        joined = sorted(now - previous) if previous is not None else []
        left = sorted(previous - now) if previous is not None else []
        days.append(SeriesDay(day, prices, best, joined, left, [rows[p] for p in sorted(rows)]))
        previous = now
    return days


def newest_pages(
    con: duckdb.DuckDBPyConnection, gpu: str, tier: str, day: dt.date
) -> list[tuple[str, dt.date, int]]:
    """Per provider that ever listed ``gpu`` at ``tier`` by ``day``: the newest page with a list
    price for it and that page's age on ``day`` (oldest last): what to say when none is current."""
    rows = con.execute(sql("queries/newest_list_pages"), {"gpu": gpu, "tier": tier, "day": day}).fetchall()
    return [(provider, seen, (day - seen).days) for provider, seen in rows]
