"""The memory chart: stacked per-GPU memory of each parallel setup against GPU memory sizes."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.text import Annotation

from gpuprice.reports import formatting as fmt
from gpuprice.reports.chart_style import CHART_STYLE, PART_COLORS, finish_style, new_figure
from gpuprice.reports.labels import place_labels
from gpuprice.reports.memory_verdict import MEMORY_PARTS, GpuCapacity, MemoryBar
from gpuprice.reports.svg import chart_text, figure_to_svg, fit_axes

_BAR_WIDTH = 0.62  # bar width in slots of 1


def memory_chart(bars: Sequence[MemoryBar], capacities: Sequence[GpuCapacity], *, chart_id: str) -> Markup:
    """Stacked per-GPU memory of each parallel setup, with GPU memory sizes as reference lines."""
    with matplotlib.rc_context(CHART_STYLE):
        fig = new_figure(7.2, 3.4)
        ax = fig.axes[0]
        parts = [p for p in (*MEMORY_PARTS, "total") if any(p in bar.parts for bar in bars)]
        xs = range(len(bars))
        bottoms = [0.0] * len(bars)
        for part in parts:
            values = [bar.parts.get(part, 0.0) for bar in bars]
            _bar_layer(
                ax,
                bottoms,
                values,
                facecolor=PART_COLORS.get(part, "#666666"),
                label=chart_text(fmt.humanize(part)),
                edgecolor="white",
            )
            bottoms = [b + v for b, v in zip(bottoms, values)]
        margins = [max((bar.planning_gb or 0.0) - bar.total, 0.0) for bar in bars]
        if any(margins):
            _bar_layer(
                ax,
                bottoms,
                margins,
                facecolor="none",
                edgecolor="#666666",
                hatch="////",
                label="Planning margin",
            )
        tops = [b + m for b, m in zip(bottoms, margins)]
        totals = [
            ax.annotate(
                fmt.gb(bar.total),
                (x, top),
                textcoords="offset points",
                xytext=(0, 3),
                fontsize=7.5,
                color="#333333",
                visible=False,
            )
            for x, bar, top in zip(xs, bars, tops)
        ]
        peak = max(tops, default=1.0)
        # An empty band right of the bars holds the memory-size labels, clear of the bars.
        sizes = _capacity_lines(ax, capacities, peak, right=len(bars) + 0.75)
        ax.set_xticks(list(xs), [chart_text(bar.label) for bar in bars], fontsize=8)
        ax.set_ylabel("Memory per GPU (GB)")
        ax.set_xlabel("Parallel setup (GPUs and sharding)")
        ax.set_xlim(-0.6, len(bars) + 0.8)
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), title="memory term", title_fontsize=8)
        finish_style(fig)
        ax.grid(False, axis="x")
        fit_axes(fig)
        place_labels(ax, [*totals, *sizes])
        return figure_to_svg(fig, title="Per-GPU memory breakdown by parallel setup", chart_id=chart_id)


def _bar_layer(ax, bottoms: Sequence[float], heights: Sequence[float], **style) -> None:
    """One layer of the stacked bars (bar i at x = i) as a single collection.

    ``ax.bar`` makes one patch per bar, each placed and drawn on its own: several times slower
    for the same picture. The axis limits are set by the caller, so no autoscaling is lost.
    """
    half = _BAR_WIDTH / 2
    boxes = [
        ((x - half, low), (x - half, low + height), (x + half, low + height), (x + half, low))
        for x, (low, height) in enumerate(zip(bottoms, heights))
    ]
    ax.add_collection(PolyCollection(boxes, linewidth=0.5, joinstyle="miter", **style), autolim=False)


def _capacity_lines(
    ax: Axes, capacities: Sequence[GpuCapacity], peak: float, *, right: float
) -> list[Annotation]:
    """Dashed lines at the GPU memory sizes near the bars (others would only squash the chart),
    and their labels (hidden until :func:`place_labels` finds each a free spot).

    Sizes within 8 % of each other share one line (80 and 94 GB cards would print on top of
    each other); the label names the first GPU and how many more share it.
    """
    groups: list[tuple[float, list[str]]] = []
    for cap in sorted(capacities, key=lambda c: (c.memory_gb, c.gpu)):
        if groups and cap.memory_gb <= groups[-1][0] * 1.08:
            groups[-1][1].append(cap.gpu)
        else:
            groups.append((cap.memory_gb, [cap.gpu]))
    below = [g for g in groups if g[0] < peak]
    above = [g for g in groups if g[0] >= peak]
    shown = below[-5:] + above[:1]  # the sizes closest to the bars' tops
    ceiling = max([peak, *(size for size, _ in shown)]) * 1.12
    ax.set_ylim(0, ceiling)
    labels = []
    for size, names in shown:
        label = f"{size:,.0f} GB: {names[0]}" + (f" +{len(names) - 1}" if len(names) > 1 else "")
        ax.axhline(size, color="#B22222", linestyle=(0, (4, 3)), linewidth=0.8, zorder=3)
        labels.append(
            ax.annotate(
                chart_text(label),
                (right, size),
                textcoords="offset points",
                xytext=(-2, 2),
                fontsize=7,
                color="#B22222",
                zorder=4,
                visible=False,
            )
        )
    return labels
