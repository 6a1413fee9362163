"""The cost/time chart: cost per run against expected wall time per ranked offer."""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib
from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.text import Annotation, Text
from matplotlib.ticker import FuncFormatter

from gpuprice.reports import formatting as fmt
from gpuprice.reports.chart_style import CHART_STYLE, finish_style, new_figure, series_styles
from gpuprice.reports.data import RankedOffer
from gpuprice.reports.labels import place_labels, point_boxes
from gpuprice.reports.svg import chart_text, figure_to_svg, fit_axes, measuring_renderer


def cost_time_chart(
    offers: Sequence[RankedOffer], *, deadline_hours: float | None, chart_id: str, highlight: int = 3
) -> Markup:
    """Cost per run (every cost term) against expected wall time per ranked offer: the trade-off.

    One series per provider and tier, each with its own colour and marker. The best offers get a
    ring and a number placed clear of every other label; the numbers are listed under the chart
    with what they stand for, so a number that finds no free spot is still named."""
    with matplotlib.rc_context(CHART_STYLE):
        fig = new_figure(7.2, 4.0)
        ax = fig.axes[0]
        ranked = sorted(offers, key=lambda o: o.rank)
        _offer_series(ax, ranked)
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
            _list_best(ax, best)
        finish_style(fig)
        numbers = _rank_numbers(ax, best)
        fit_axes(fig)  # the axes' final size first: labels are placed in display space
        keep_out = point_boxes(ax, [(o.wall_hours, o.total_cost_usd) for o in offers], radius=3.5)
        keep_out += point_boxes(ax, [(o.wall_hours, o.total_cost_usd) for o in best], radius=7.0)
        if deadline is not None:
            keep_out.append(deadline.get_window_extent(measuring_renderer()))
        place_labels(ax, numbers, keep_out=keep_out)
        return figure_to_svg(fig, title="Run cost against wall time per offer", chart_id=chart_id)


def _offer_series(ax: Axes, ranked: Sequence[RankedOffer]) -> None:
    """One scatter per provider and tier (one collection each: fast to draw), its own colour and
    marker, the legend in order of each group's best offer."""
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


def _list_best(ax: Axes, best: Sequence[RankedOffer]) -> None:
    """The best offers named under the chart, so a number that finds no free spot is still named."""
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


def _rank_numbers(ax: Axes, best: Sequence[RankedOffer]) -> list[Annotation]:
    """The best offers' rank numbers, hidden until :func:`place_labels` finds each a free spot."""
    return [
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
