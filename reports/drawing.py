"""Draw a week's charts, in this process: each distinct chart once (matplotlib to inline SVG)."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from gpuprice.reports.chart_jobs import ChartJob, unique_jobs


def draw_charts(jobs: Sequence[ChartJob]) -> dict[str, Markup]:
    """SVG per job key, each distinct key drawn once."""
    return {job.key: job.draw() for job in unique_jobs(jobs)}
