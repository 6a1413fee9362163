"""Why ``gpuprice rank`` shows nothing, and the nearest answer, for stderr.

Exists because an empty ranking has several causes (no snapshot, no matching tier or provider,
nothing fits, every price too old, every offer beyond a limit) and the user needs the one that
applies, with the cheapest (or fastest) plan beyond the limits.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pandas as pd

from gpuprice.models.workloads import Workload


def _plan(row: Any) -> str:
    return f"{row['provider']} {int(row['gpu_count'])}x {row['gpu']} {row['tier']}"


def empty_reason(
    chosen: Workload, offers: pd.DataFrame, ranked: pd.DataFrame, day: dt.date, max_age: int
) -> str:
    """Why nothing is shown, and the nearest answer, for stderr."""
    from gpuprice.models.ranking import LIMITS, PRICE_AGE

    when = f"on or before {day.isoformat()}"
    if offers.empty:
        return f"no scraped snapshot {when}: run `gpuprice run --date {day.isoformat()}` (or backfill) first"
    if ranked.empty:
        picked = offers
        if chosen.tier is not None:
            picked = picked[picked["tier"].isin(chosen.tier)]
        if chosen.providers is not None:
            picked = picked[picked["provider"].isin(chosen.providers)]
        if picked.empty:
            asked = [f"tier {','.join(chosen.tier)}" for _ in [0] if chosen.tier is not None]
            asked += [f"providers {','.join(chosen.providers)}" for _ in [0] if chosen.providers is not None]
            return f"no offer {when} matches {' and '.join(asked)}"
        return (
            f"nothing fits {chosen.name}: no offer {when} holds it in memory within its GPU and node limits"
        )
    old = ranked["excluded_by"].map(lambda codes: PRICE_AGE in codes)
    current = ranked[~old]
    if current.empty:
        ages = ranked.groupby("provider")["price_age_days"].min().sort_values()
        listed = ", ".join(f"{p} {int(a)} days" for p, a in ages.items())
        return (
            f"no current price fits {chosen.name} on {day.isoformat()}: every fitting offer's page is older "
            f"than {max_age} days ({listed}); --include-stale shows them, ranked last"
        )
    lists: list[list[str]] = list(current["excluded_by"])
    counts = {c: sum(c in codes for codes in lists) for c in LIMITS}
    limits = {
        "deadline": f"miss the {chosen.deadline_hours:g} h deadline" if chosen.deadline_hours else "",
        "max_gpus": f"exceed {chosen.max_gpus} GPUs",
        "max_nodes": f"exceed {chosen.max_nodes} node(s)",
        "budget": f"exceed the ${chosen.budget_usd:,.2f} budget" if chosen.budget_usd else "",
    }
    parts = [f"{n} {limits[c]}" for c, n in counts.items() if n]
    wall = current["cost_terms"].map(
        lambda t: float((json.loads(t) if isinstance(t, str) else t)["wall_hours"])
    )

    def breaks(row: Any) -> str:
        said = {
            "budget": f"over the ${chosen.budget_usd or 0:,.2f} budget",
            "deadline": f"{wall[row.name]:,.1f} h, over the {chosen.deadline_hours or 0:g} h deadline",
            "max_gpus": f"{int(row['gpu_count'])} GPUs, over the limit of {chosen.max_gpus}",
            "max_nodes": f"{int(row['nodes'])} nodes, over the limit of {chosen.max_nodes}",
        }
        return ", ".join(said[c] for c in row["excluded_by"] if c in said)

    cheapest = current.loc[current["total_cost_usd"].astype(float).idxmin()]
    nearest = [
        f"cheapest plan: ${float(cheapest['total_cost_usd']):,.2f} ({_plan(cheapest)}), {breaks(cheapest)}"
    ]
    if counts["deadline"]:
        fastest = current.loc[wall.idxmin()]
        if fastest.name != cheapest.name:
            nearest.append(f"fastest plan: {_plan(fastest)}, {breaks(fastest)}")
    return (
        f"every offer that fits {chosen.name} is excluded by a constraint: {'; '.join(parts)}; "
        f"{'; '.join(nearest)} (--include-infeasible shows them, marked)"
    )
