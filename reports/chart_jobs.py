"""The charts of a week's workload pages as jobs: listed first, drawn together, then placed.

Listing every chart before drawing any lets ``reports.drawing`` hand some to a helper process
while this one draws the rest, and draws each GPU's price history once for the whole week (it
is the same picture on every page that shows it). A job holds only report data, so it pickles.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from gpuprice.reports.data import GpuPriceHistory, RankedOffer, WorkloadReport
from gpuprice.reports.memory_verdict import GpuCapacity, MemoryBar
from gpuprice.reports.weeks import IsoWeek
from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS


@dataclass(frozen=True)
class MemoryChartJob:
    key: str  # names the drawing among a week's jobs; also its SVG id prefix
    bars: Sequence[MemoryBar]
    capacities: Sequence[GpuCapacity]

    def draw(self) -> Markup:
        from gpuprice.reports import charts  # matplotlib: imported only where something is drawn

        return charts.memory_chart(self.bars, self.capacities, chart_id=self.key)


@dataclass(frozen=True)
class CostChartJob:
    key: str
    offers: Sequence[RankedOffer]
    deadline_hours: float | None

    def draw(self) -> Markup:
        from gpuprice.reports import charts

        return charts.cost_time_chart(self.offers, deadline_hours=self.deadline_hours, chart_id=self.key)


@dataclass(frozen=True)
class HistoryChartJob:
    history: GpuPriceHistory
    week: IsoWeek

    @property
    def key(self) -> str:
        return history_key(self.history.gpu)

    def draw(self) -> Markup:
        from gpuprice.reports import charts

        return charts.price_history_chart(self.history, self.week, chart_id=self.key)


ChartJob = MemoryChartJob | CostChartJob | HistoryChartJob


@dataclass(frozen=True)
class HistoryChart:
    svg: Markup
    caption: str


def history_key(gpu: str) -> str:
    """Key and SVG id prefix of a GPU's price-history chart: from the GPU only, so one drawing
    serves every page of the week. GPU names that are not already id-safe get a digest of the
    name, so two of them never share a key (nor their charts)."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "-", gpu)
    if safe == gpu:
        return f"history-{safe}"
    return f"history-{safe}-{hashlib.sha256(gpu.encode()).hexdigest()[:8]}"


def workload_jobs(report: WorkloadReport, chart_prefix: str) -> list[ChartJob]:
    """The charts one workload page shows, in page order."""
    jobs: list[ChartJob] = []
    if report.memory.bars:
        jobs.append(MemoryChartJob(f"{chart_prefix}-memory", report.memory.bars, report.memory.capacities))
    if report.rankings:
        jobs.append(CostChartJob(f"{chart_prefix}-cost", report.rankings, report.definition.deadline_hours))
    jobs.extend(HistoryChartJob(item, report.meta.week) for item in report.price_history if item.series)
    return jobs


def unique_jobs(jobs: Sequence[ChartJob]) -> list[ChartJob]:
    """First job per key: the week's pages share their GPUs' price-history charts."""
    seen: dict[str, ChartJob] = {}
    for job in jobs:
        seen.setdefault(job.key, job)
    return list(seen.values())


def _history_caption(item: GpuPriceHistory) -> str:
    moved = [c for c in item.changes if c.tier == "on_demand"]
    return (
        f"Cheapest current on-demand {item.gpu} price per GPU-hour by provider, day by day (a line stops"
        f" where its newest page is more than {MAX_PRICE_AGE_DAYS} days old); the report week is shaded"
    ) + (
        f"; {len(moved)} on-demand change{'s' if len(moved) != 1 else ''} this week: the largest are labelled on"
        " their own line where the changed offer is that provider's cheapest; the table above lists all."
        if moved
        else "."
    )


def page_charts(report: WorkloadReport, chart_prefix: str, drawn: Mapping[str, Markup]) -> dict[str, Any]:
    """The template's ``charts``: memory and trade-off SVG (or None) and the captioned histories.

    ``drawn`` maps job keys to SVG and must hold every job of ``workload_jobs(report, chart_prefix)``.
    """
    placed: dict[str, Any] = {"memory": None, "tradeoff": None, "history": []}
    for job in workload_jobs(report, chart_prefix):
        if isinstance(job, MemoryChartJob):
            placed["memory"] = drawn[job.key]
        elif isinstance(job, CostChartJob):
            placed["tradeoff"] = drawn[job.key]
        else:
            placed["history"].append(HistoryChart(svg=drawn[job.key], caption=_history_caption(job.history)))
    return placed
