"""The price history chart: on-demand $/GPU-hour per provider series over recent weeks."""

from __future__ import annotations

import datetime as dt

import matplotlib
import matplotlib.dates as mdates
from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.text import Annotation
from matplotlib.ticker import FuncFormatter, MaxNLocator

from gpuprice.reports import formatting as fmt
from gpuprice.reports.chart_style import CHART_STYLE, finish_style, new_figure, series_styles
from gpuprice.reports.data import GpuPriceHistory
from gpuprice.reports.formatting import series_label
from gpuprice.reports.labels import place_labels, point_boxes
from gpuprice.reports.svg import chart_text, figure_to_svg, fit_axes
from gpuprice.reports.weeks import IsoWeek


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
    with matplotlib.rc_context(CHART_STYLE):
        fig = new_figure(5.8, 3.4)
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
        prices_on, markers = _plot_series(ax, history, styles)
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
        finish_style(fig)
        labels = _change_labels(ax, history, prices_on, styles, callouts)
        fit_axes(fig)
        place_labels(ax, labels, keep_out=point_boxes(ax, markers, radius=3.0))
        return figure_to_svg(fig, title=f"Price history of {history.gpu}", chart_id=chart_id)


def _plot_series(
    ax: Axes, history: GpuPriceHistory, styles: dict[str, tuple[str, str]]
) -> tuple[dict[str, dict[dt.date, float]], list[tuple[float, float]]]:
    """One step line per series, markers where its price moved; returns each series' price per
    day (NaN days left out) and the marker positions (kept clear of the labels)."""
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
    return prices_on, markers


def _change_labels(
    ax: Axes,
    history: GpuPriceHistory,
    prices_on: dict[str, dict[dt.date, float]],
    styles: dict[str, tuple[str, str]],
    callouts: int,
) -> list[Annotation]:
    """The week's largest changes (up to ``callouts``) as labels on their own series, at the
    changed price, in the series' colour; hidden until :func:`place_labels` places them."""
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
    return labels
