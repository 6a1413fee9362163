"""The report charts, drawn with matplotlib (Agg) and returned as inline SVG fragments."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
from markupsafe import Markup
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from gpuprice.reports import formatting as fmt
from gpuprice.reports.data import MEMORY_PARTS, GpuCapacity, GpuPriceHistory, MemoryBar, RankedOffer
from gpuprice.reports.svg import SVG_DPI, chart_text, figure_to_svg
from gpuprice.reports.weeks import IsoWeek
from gpuprice.scrapers.offer import PROVIDERS

# One colour per provider across every chart, so a reader learns them once (colour-blind-safe
# Okabe-Ito palette, then Paul Tol's wine/teal/sand for the hyperscalers and marketplace);
# unknown providers cycle through greys.
PROVIDER_COLORS: dict[str, str] = dict(
    zip(
        PROVIDERS,
        (
            "#0072B2",
            "#E69F00",
            "#009E73",
            "#CC79A7",
            "#D55E00",
            "#56B4E9",
            "#882255",
            "#000000",
            "#44AA99",
            "#DDCC77",
        ),
        strict=True,
    )
)
_EXTRA_COLORS = ("#444444", "#777777", "#999999", "#222222")
PART_COLORS: dict[str, str] = {
    "weights": "#0072B2",
    "gradients": "#56B4E9",
    "optimizer": "#E69F00",
    "activations": "#009E73",
    "logits": "#CC79A7",
    "overhead": "#999999",
    "total": "#0072B2",
}
TIER_MARKERS: dict[str, str] = {"on_demand": "o", "spot": "^", "reserved": "s"}
_BAR_WIDTH = 0.62  # memory chart: bar width in slots of 1

_STYLE = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e5e5e5",
    "grid.linewidth": 0.6,
    "legend.frameon": False,
    "legend.fontsize": 8,
}


def provider_color(provider: str) -> str:
    if provider in PROVIDER_COLORS:
        return PROVIDER_COLORS[provider]
    return _EXTRA_COLORS[sum(map(ord, provider)) % len(_EXTRA_COLORS)]


def _figure(width: float, height: float) -> Figure:
    """A one-axes figure; call inside ``rc_context(_STYLE)`` so artists pick up the style.

    No layout engine: ``figure_to_svg`` fits the margins in one measuring pass (constrained
    layout would draw each figure twice)."""
    fig = Figure(figsize=(width, height), dpi=SVG_DPI)
    fig.subplots()
    return fig


def _styled(fig: Figure) -> None:
    for ax in fig.axes:
        ax.set_axisbelow(True)
        ax.tick_params(labelsize=8)


def memory_chart(bars: Sequence[MemoryBar], capacities: Sequence[GpuCapacity], *, chart_id: str) -> Markup:
    """Stacked per-GPU memory of each parallel setup, with GPU memory sizes as reference lines."""
    with matplotlib.rc_context(_STYLE):
        fig = _figure(7.2, 3.4)
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
        for x, bar, top in zip(xs, bars, tops):
            ax.annotate(
                fmt.gb(bar.total),
                (x, top),
                textcoords="offset points",
                xytext=(0, 3),
                ha="center",
                fontsize=7.5,
                color="#333333",
            )
        peak = max(tops, default=1.0)
        # An empty band right of the bars holds the memory-size labels, clear of the bars.
        _capacity_lines(ax, capacities, peak, right=len(bars) + 0.75)
        ax.set_xticks(list(xs), [chart_text(bar.label) for bar in bars], fontsize=8)
        ax.set_ylabel("GB per GPU")
        ax.set_xlim(-0.6, len(bars) + 0.8)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        _styled(fig)
        ax.grid(False, axis="x")
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


def _capacity_lines(ax, capacities: Sequence[GpuCapacity], peak: float, *, right: float) -> None:
    """Dashed lines at the GPU memory sizes near the bars (others would only squash the chart).

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
    for size, names in shown:
        label = f"{size:,.0f} GB: {names[0]}" + (f" +{len(names) - 1}" if len(names) > 1 else "")
        ax.axhline(size, color="#B22222", linestyle=(0, (4, 3)), linewidth=0.8, zorder=3)
        ax.text(
            right, size, chart_text(label), ha="right", va="bottom", fontsize=7, color="#B22222", zorder=4
        )


def cost_time_chart(
    offers: Sequence[RankedOffer], *, deadline_hours: float | None, chart_id: str, highlight: int = 3
) -> Markup:
    """Cost per run (every cost term) against expected wall time per ranked offer: the cost/deadline trade-off."""
    with matplotlib.rc_context(_STYLE):
        fig = _figure(7.2, 3.8)
        ax = fig.axes[0]
        groups: dict[tuple[str, str], list[RankedOffer]] = {}
        for offer in sorted(offers, key=lambda o: o.rank):  # legend in order of each group's best offer
            groups.setdefault((offer.provider, offer.tier), []).append(offer)
        for (provider, tier), members in groups.items():  # one collection per group: fast to draw
            ax.scatter(
                [o.wall_hours for o in members],
                [o.total_cost_usd for o in members],
                s=[46 if o.rank <= highlight else 26 for o in members],
                color=provider_color(provider),
                marker=TIER_MARKERS.get(tier, "D"),
                alpha=0.85,
                edgecolor="white",
                linewidth=0.6,
                zorder=3,
                label=chart_text(f"{provider} · {tier.replace('_', '-')}"),
            )
        # Alternate label offsets: the best offers often sit on top of each other.
        offsets = ((6, 5), (6, -12), (-20, 5), (-20, -12))
        for index, offer in enumerate(sorted(offers, key=lambda o: o.rank)[:highlight]):
            ax.annotate(
                f"#{offer.rank}",
                (offer.wall_hours, offer.total_cost_usd),
                textcoords="offset points",
                xytext=offsets[index % len(offsets)],
                fontsize=8,
                fontweight="bold",
                color="#222222",
                zorder=4,
            )
        hours = [o.wall_hours for o in offers if o.wall_hours > 0]
        costs = [o.total_cost_usd for o in offers if o.total_cost_usd > 0]
        if hours and max(hours) / min(hours) > 30:
            ax.set_xscale("log")
        if costs and max(costs) / min(costs) > 30:
            ax.set_yscale("log")
        if deadline_hours:
            _deadline(ax, deadline_hours, max(hours, default=0.0))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _axis_hours(v)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: chart_text(fmt.usd_compact(v))))
        ax.set_xlabel("Expected wall time to the last checkpoint (hours)")
        ax.set_ylabel("Cost per run, all terms")
        if offers:
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), title="provider · tier", title_fontsize=8)
        _styled(fig)
        return figure_to_svg(fig, title="Run cost against wall time per offer", chart_id=chart_id)


def _deadline(ax, deadline_hours: float, longest: float) -> None:
    """A deadline line, unless it lies far right of every offer (it would squash the points)."""
    label = f"deadline {fmt.hours(deadline_hours)}"
    if longest and deadline_hours > longest * 2.5:
        ax.text(
            0.99,
            0.98,
            chart_text(f"{label}: every offer finishes in time"),
            transform=ax.transAxes,
            ha="right",
            va="top",
            fontsize=8,
            color="#1B7F3B",
        )
        return
    ax.axvline(deadline_hours, color="#B22222", linestyle=(0, (4, 3)), linewidth=1, zorder=2)
    ax.annotate(
        chart_text(label),
        (deadline_hours, 1),
        xycoords=("data", "axes fraction"),
        xytext=(4, -10),
        textcoords="offset points",
        fontsize=8,
        color="#B22222",
        va="top",
    )
    low, high = ax.get_xlim()
    ax.set_xlim(min(low, deadline_hours * 0.9), max(high, deadline_hours * 1.1))


def _axis_hours(value: float) -> str:
    if value <= 0 or math.isnan(value):
        return "0"
    return f"{value:,.0f}" if value >= 10 else f"{value:g}"


def price_history_chart(
    history: GpuPriceHistory, week: IsoWeek, *, chart_id: str, callouts: int = 3
) -> Markup:
    """On-demand $/GPU-hour per provider over recent weeks; the report week shaded, changes marked."""
    with matplotlib.rc_context(_STYLE):
        fig = _figure(5.6, 3.3)
        ax = fig.axes[0]
        ax.axvspan(week.start, week.end + dt.timedelta(days=1), color="#fff3cd", zorder=0, lw=0)
        for series in history.series:
            days = [d for d, _ in series.points]
            prices = [p for _, p in series.points]
            ax.step(
                days,
                prices,
                where="post",
                color=provider_color(series.provider),
                linewidth=1.6,
                linestyle="--" if "community" in series.label or "lowest" in series.label else "-",
                label=chart_text(series.label),
                zorder=2,
            )
            ax.plot(
                days[-1:], prices[-1:], "o", color=provider_color(series.provider), markersize=3.5, zorder=3
            )
        for change in sorted(history.changes, key=lambda c: -abs(c.change))[:callouts]:
            if change.tier != "on_demand":
                continue
            ax.annotate(
                chart_text(fmt.pct(change.change)),
                (change.snapshot_date, change.new_usd_per_gpu_hour),
                textcoords="offset points",
                xytext=(0, 10),
                ha="center",
                fontsize=7.5,
                fontweight="bold",
                color="#B22222" if change.change > 0 else "#1B7F3B",
                zorder=5,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
                arrowprops={"arrowstyle": "-", "color": "#999999", "lw": 0.6},
            )
        ax.xaxis.set_major_locator(mdates.AutoDateLocator(minticks=4, maxticks=8))
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(ax.xaxis.get_major_locator()))
        ax.yaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: chart_text(fmt.usd_rate(v))))
        ax.set_ylabel(chart_text("$ per GPU-hour"))
        low, high = ax.get_ylim()
        ax.set_ylim(max(0.0, low - (high - low) * 0.15), high + (high - low) * 0.2)
        ax.set_title(chart_text(f"{history.gpu} on-demand (shaded: {week})"), loc="left")
        if history.series:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, fontsize=7.5)
        _styled(fig)
        return figure_to_svg(fig, title=f"Price history of {history.gpu}", chart_id=chart_id)
