"""The charts' shared look: colours, markers and matplotlib style, and the figure they start from.

Every chart module draws with these, so one provider keeps one colour across pages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure
from matplotlib.typing import RcKeyType

from gpuprice.reports.svg import SVG_DPI
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

CHART_STYLE: dict[RcKeyType, Any] = {
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
    """A provider's own colour; an unknown provider gets a stable grey."""
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


def new_figure(width: float, height: float) -> Figure:
    """A one-axes figure; call inside ``rc_context(CHART_STYLE)`` so artists pick up the style.

    No layout engine: ``figure_to_svg`` fits the margins in one measuring pass (constrained
    layout would draw each figure twice)."""
    fig = Figure(figsize=(width, height), dpi=SVG_DPI)
    fig.subplots()
    return fig


def finish_style(fig: Figure) -> None:
    """The house tick size, with grid lines drawn below the data."""
    for ax in fig.axes:
        ax.set_axisbelow(True)
        ax.tick_params(labelsize=8)
