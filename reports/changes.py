"""This week's price changes: each offer's price at the week's end against its last scraped
observation before the week (the baseline), with the baseline's age."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import duckdb

from gpuprice.reports.data import PriceChange
from gpuprice.reports.loading import _date, _rows
from gpuprice.reports.weeks import IsoWeek
from gpuprice.scrapers.offer import OFFER_IDENTITY_FIELDS
from gpuprice.warehouse.sql_files import sql

_OFFER_KEY = ("provider", *OFFER_IDENTITY_FIELDS)


def week_changes(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> list[PriceChange]:
    """:func:`week_price_moves`' changes alone."""
    return week_price_moves(con, week)[0]


def week_price_moves(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> tuple[list[PriceChange], int]:
    """Offers whose price at the end of the week differs from their last observation before it.

    Observations are dated by their page (``observed_on``), so a replayed old page is not a change
    of this week. The baseline is each offer's newest observation before the week's Monday, however
    old (``PriceChange.baseline_age_days`` says how old); the change is dated by the first
    observation in the week of the final price. Offers first seen this week have no baseline and
    are not changes; their number is returned beside the changes. Biggest relative move first.
    """
    rows = _rows(con, sql("reports/week_observations"), {"end": week.end})
    baseline: dict[tuple, dict[str, Any]] = {}
    inside: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:  # ordered by date
        key = tuple(row[k] for k in _OFFER_KEY)
        seen = _date(row["seen"])
        if seen is None:
            continue
        row["seen"] = seen
        if seen < week.start:
            baseline[key] = row
        else:
            inside[key].append(row)
    changes = []
    without_baseline = 0
    for key, observed in inside.items():
        before = baseline.get(key)
        final = observed[-1]
        without_baseline += before is None
        if before is None or before["usd_per_gpu_hour"] == final["usd_per_gpu_hour"]:
            continue
        since = 0
        for i, row in enumerate(observed):
            if row["usd_per_gpu_hour"] != final["usd_per_gpu_hour"]:
                since = i + 1
        changes.append(
            PriceChange(
                **{k: final[k] for k in PriceChange.model_fields if k in final},
                snapshot_date=observed[since]["seen"],
                previous_snapshot_date=before["seen"],
                old_usd_per_gpu_hour=before["usd_per_gpu_hour"],
                new_usd_per_gpu_hour=final["usd_per_gpu_hour"],
            )
        )
    changes.sort(key=lambda c: (-abs(c.change), c.provider, c.gpu, c.sku))
    return changes, without_baseline
