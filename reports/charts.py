"""The report charts, drawn with matplotlib (Agg) and returned as inline SVG fragments.

One module per chart (:mod:`~gpuprice.reports.memory_chart`, :mod:`~gpuprice.reports.cost_time_chart`,
:mod:`~gpuprice.reports.price_history_chart`), their shared look in
:mod:`~gpuprice.reports.chart_style`; this module names the three for the chart jobs, which
import it only where something is drawn (matplotlib is slow to import).
"""

from __future__ import annotations

from gpuprice.reports.chart_style import (
    PART_COLORS,
    PROVIDER_COLORS,
    SERIES_COLORS,
    SERIES_MARKERS,
    TIER_MARKERS,
    provider_color,
    series_styles,
)
from gpuprice.reports.cost_time_chart import cost_time_chart
from gpuprice.reports.memory_chart import memory_chart
from gpuprice.reports.price_history_chart import price_history_chart

__all__ = [
    "PART_COLORS",
    "PROVIDER_COLORS",
    "SERIES_COLORS",
    "SERIES_MARKERS",
    "TIER_MARKERS",
    "cost_time_chart",
    "memory_chart",
    "price_history_chart",
    "provider_color",
    "series_styles",
]
