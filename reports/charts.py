"""The report charts, drawn with matplotlib (Agg) and returned as inline SVG fragments."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.text import Annotation, Text
from matplotlib.ticker import FuncFormatter, MaxNLocator
from matplotlib.typing import RcKeyType

from gpuprice.reports import formatting as fmt
from gpuprice.reports.data import MEMORY_PARTS, GpuCapacity, GpuPriceHistory, MemoryBar, RankedOffer
from gpuprice.reports.formatting import series_label
from gpuprice.reports.labels import place_labels, point_boxes
from gpuprice.reports.svg import SVG_DPI, chart_text, figure_to_svg, fit_axes, measuring_renderer
from gpuprice.reports.weeks import IsoWeek
from gpuprice.scrapers.offer import PROVIDERS

# Series colours (Okabe-Ito, colour-blind safe, then darker tones) and markers: each series of a
# chart gets its own colour AND marker, so two lines of one provider (secure and community cloud)
# or a grey print never look alike. Provider colours (Okabe-Ito, then Paul Tol's wine/teal/sand
# for the hyperscalers and marketplace) stay the first choice where a chart has one series per
# provider, so a reader meets the same colour for the same provider across pages.
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
SERIES_COLORS: tuple[str, ...] = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#D55E00",
    "#56B4E9",
    "#000000",
    "#8C564B",
    "#7F7F7F",
    "#B8860B",
    "#4B0082",
    "#2F4F4F",
)
SERIES_MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")
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

_STYLE: dict[RcKeyType, Any] = {
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


def series_styles(keys: Sequence[str], providers: Sequence[str]) -> dict[str, tuple[str, str]]:
    """(colour, marker) per series key, all distinct within one chart: a provider's own colour for
    its first series, the next unused palette colour for any further one; markers in order."""
    styles: dict[str, tuple[str, str]] = {}
    used: set[str] = set()
    for index, (key, provider) in enumerate(zip(keys, providers, strict=True)):
        color = provider_color(provider)
        if color in used:
            color = next(
                (c for c in SERIES_COLORS if c not in used), _EXTRA_COLORS[index % len(_EXTRA_COLORS)]
            )
        used.add(color)
        styles[key] = (color, SERIES_MARKERS[index % len(SERIES_MARKERS)])
    return styles


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
        _styled(fig)
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


def cost_time_chart(
    offers: Sequence[RankedOffer], *, deadline_hours: float | None, chart_id: str, highlight: int = 3
) -> Markup:
    """Cost per run (every cost term) against expected wall time per ranked offer: the trade-off.

    One series per provider and tier, each with its own colour and marker. The best offers get a
    ring and a number placed clear of every other label; the numbers are listed under the chart
    with what they stand for, so a number that finds no free spot is still named."""
    with matplotlib.rc_context(_STYLE):
        fig = _figure(7.2, 4.0)
        ax = fig.axes[0]
        ranked = sorted(offers, key=lambda o: o.rank)
        groups: dict[tuple[str, str], list[RankedOffer]] = {}
        for offer in ranked:  # legend in order of each group's best offer
            groups.setdefault((offer.provider, offer.tier), []).append(offer)
        styles = series_styles([f"{p}|{t}" for p, t in groups], [p for p, _ in groups])
        for (provider, tier), members in groups.items():  # one collection per group: fast to draw
            color, marker = styles[f"{provider}|{tier}"]
            ax.scatter(
                [o.wall_hours for o in members],
                [o.total_cost_usd for o in members],
                s=30,
                color=color,
                marker=marker,
                alpha=0.9,
                edgecolor="white",
                linewidth=0.5,
                zorder=3,
                label=chart_text(f"{provider} · {tier.replace('_', '-')}"),
            )
        best = ranked[:highlight]
        if best:
            ax.scatter(
                [o.wall_hours for o in best],
                [o.total_cost_usd for o in best],
                s=130,
                facecolors="none",
                edgecolors="#222222",
                linewidths=0.9,
                zorder=4,
            )
        hours = [o.wall_hours for o in offers if o.wall_hours > 0]
        costs = [o.total_cost_usd for o in offers if o.total_cost_usd > 0]
        if hours and max(hours) / min(hours) > 30:
            ax.set_xscale("log")
        if costs and max(costs) / min(costs) > 30:
            ax.set_yscale("log")
        deadline = _deadline(ax, deadline_hours, max(hours, default=0.0)) if deadline_hours else None
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _axis_hours(v)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: chart_text(fmt.usd_compact(v))))
        ax.set_xlabel("Expected wall time to the last checkpoint (hours)")
        ax.set_ylabel("Cost per run, all terms (USD)")
        if offers:
            ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), title="provider · tier", title_fontsize=8)
        if best:
            listing = "\n".join(
                chart_text(
                    f"#{o.rank} {o.provider} · {o.gpu_count}× {o.gpu} · {o.tier.replace('_', '-')}: "
                    f"{fmt.usd(o.total_cost_usd)}, {fmt.hours(o.wall_hours)}"
                )
                for o in best
            )
            ax.text(
                0.0,
                -0.2,
                listing,
                transform=ax.transAxes,
                va="top",
                fontsize=7.5,
                color="#222222",
                linespacing=1.4,
            )
        _styled(fig)
        numbers = [
            ax.annotate(
                f"#{o.rank}",
                (o.wall_hours, o.total_cost_usd),
                textcoords="offset points",
                xytext=(6, 4),
                fontsize=8,
                fontweight="bold",
                color="#222222",
                zorder=5,
                visible=False,
                annotation_clip=False,
                # A leader line ties each number to its ring, wherever the number found room.
                arrowprops={"arrowstyle": "-", "color": "#555555", "lw": 0.6, "shrinkA": 0, "shrinkB": 6},
            )
            for o in best
        ]
        fit_axes(fig)  # the axes' final size first: labels are placed in display space
        keep_out = point_boxes(ax, [(o.wall_hours, o.total_cost_usd) for o in offers], radius=3.5)
        keep_out += point_boxes(ax, [(o.wall_hours, o.total_cost_usd) for o in best], radius=7.0)
        if deadline is not None:
            keep_out.append(deadline.get_window_extent(measuring_renderer()))
        place_labels(ax, numbers, keep_out=keep_out)
        return figure_to_svg(fig, title="Run cost against wall time per offer", chart_id=chart_id)


def _deadline(ax: Axes, deadline_hours: float, longest: float) -> Text:
    """A deadline line and its label (returned), unless the deadline lies far right of every
    offer (it would squash the points): then a note that every offer finishes in time."""
    label = f"deadline {fmt.hours(deadline_hours)}"
    if longest and deadline_hours > longest * 2.5:
        return ax.text(
            0.99,
            0.98,
            chart_text(f"{label}: every offer finishes in time"),
            transform=ax.transAxes,
            ha="right",
            va="top",
            fontsize=8,
            color="#1B7F3B",
        )
    ax.axvline(deadline_hours, color="#B22222", linestyle=(0, (4, 3)), linewidth=1, zorder=2)
    low, high = ax.get_xlim()
    ax.set_xlim(min(low, deadline_hours * 0.9), max(high, deadline_hours * 1.1))
    return ax.annotate(
        chart_text(label),
        (deadline_hours, 1),
        xycoords=("data", "axes fraction"),
        xytext=(-4, -4),
        textcoords="offset points",
        fontsize=8,
        color="#B22222",
        ha="right",
        va="top",
    )


def _axis_hours(value: float) -> str:
    if value <= 0 or math.isnan(value):
        return "0"
    return f"{value:,.0f}" if value >= 10 else f"{value:g}"


def _date_ticks(first: dt.date, last: dt.date) -> list[dt.date]:
    """Mondays from the window's first day (always labelled) to its last, 4 to 8 of them."""
    span = max((last - first).days, 1)
    step = next((weeks for weeks in (1, 2, 3, 4, 6, 8, 13, 26, 52) if span / (7 * weeks) <= 7), 52)
    ticks = []
    day = first
    while day <= last:
        ticks.append(day)
        day += dt.timedelta(weeks=step)
    return ticks


def _date_label(value: float, first: dt.date) -> str:
    day = mdates.num2date(value).date()
    text = f"{day.day} {day:%b}"
    return f"{text}\n{day.year}" if day == first or (day.month == 1 and day.day <= 7 * 4) else text


def price_history_chart(
    history: GpuPriceHistory, week: IsoWeek, *, chart_id: str, callouts: int = 3
) -> Markup:
    """On-demand $/GPU-hour per provider series over recent weeks; the report week shaded.

    Each series has its own colour and marker (markers where its price moved); this week's
    largest changes are labelled on the series they belong to, at the changed price, in the
    series' colour, placed clear of each other."""
    with matplotlib.rc_context(_STYLE):
        fig = _figure(5.8, 3.4)
        ax = fig.axes[0]
        ax.axvspan(
            mdates.date2num(week.start),
            mdates.date2num(week.end + dt.timedelta(days=1)),
            color="#fff3cd",
            zorder=0,
            lw=0,
        )
        styles = series_styles([s.label for s in history.series], [s.provider for s in history.series])
        first = min((s.points[0][0] for s in history.series if s.points), default=week.start)
        prices_on: dict[str, dict[dt.date, float]] = {}
        markers: list[tuple[float, float]] = []
        for series in history.series:
            days = [d for d, _ in series.points]
            prices = [p for _, p in series.points]
            # A NaN point is a day without a current price: the line breaks there, no marker.
            moved = [
                i
                for i, p in enumerate(prices)
                if p == p
                and (i == 0 or p != prices[i - 1] or i == len(prices) - 1 or prices[i + 1] != prices[i + 1])
            ]
            color, marker = styles[series.label]
            ax.plot(
                [mdates.date2num(d) for d in days],
                prices,
                drawstyle="steps-post",
                color=color,
                linewidth=1.5,
                marker=marker,
                markevery=sorted(set(moved)),
                markersize=4,
                label=chart_text(series.label),
                zorder=2,
            )
            prices_on[series.label] = {d: p for d, p in series.points if p == p}
            markers += [(mdates.date2num(days[i]), prices[i]) for i in set(moved)]
        ticks = _date_ticks(first, week.end)
        ax.set_xticks([mdates.date2num(d) for d in ticks])
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _date_label(v, first)))
        ax.set_xlim(mdates.date2num(first), mdates.date2num(week.end + dt.timedelta(days=1)))
        ax.yaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: chart_text(fmt.usd_rate(v))))
        ax.set_ylabel(chart_text("Price (USD per GPU-hour)"))
        ax.set_xlabel("Date")
        low, high = ax.get_ylim()
        ax.set_ylim(max(0.0, low - (high - low) * 0.15), high + (high - low) * 0.25)
        ax.set_title(chart_text(f"{history.gpu} on-demand (shaded: {week})"), loc="left")
        if history.series:
            ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7.5, title="provider")
        _styled(fig)
        labels = []
        for change in sorted(history.changes, key=lambda c: -abs(c.change)):
            own = series_label(change.provider, change.community, change.price_basis)
            price = prices_on.get(own, {}).get(change.snapshot_date)
            # Only on its own line: a change of an offer that is not the provider's cheapest that
            # day has no point on the chart (the changes table lists it).
            if change.tier != "on_demand" or price is None or abs(price - change.new_usd_per_gpu_hour) > 1e-6:
                continue
            labels.append(
                ax.annotate(
                    chart_text(fmt.pct(change.change)),
                    (mdates.date2num(change.snapshot_date), change.new_usd_per_gpu_hour),
                    textcoords="offset points",
                    xytext=(6, 4),
                    fontsize=7.5,
                    fontweight="bold",
                    color=styles[own][0],
                    zorder=5,
                    visible=False,
                    arrowprops={"arrowstyle": "-", "color": styles[own][0], "lw": 0.6},
                )
            )
            if len(labels) == callouts:
                break
        fit_axes(fig)
        place_labels(ax, labels, keep_out=point_boxes(ax, markers, radius=3.0))
        return figure_to_svg(fig, title=f"Price history of {history.gpu}", chart_id=chart_id)
