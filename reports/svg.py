"""Turn a matplotlib figure into an SVG fragment that can sit inline in an HTML page.

Matplotlib escapes text in SVG output (``&lt;script&gt;`` stays text), so the fragment is
marked safe for Jinja; :func:`assert_inert` re-checks that no executable markup slipped in.

Speed: a figure is drawn once. Matplotlib's constrained layout draws every figure twice when
saving (a hidden draw to measure, then the real one), so :func:`fit_axes` does the measuring
instead, on one renderer shared by all charts, whose text-size cache then spans the whole run.
"""

from __future__ import annotations

import functools
import io
import itertools
import re

import matplotlib
import numpy as np

matplotlib.use("Agg")  # never open a window; reports are written headless

from markupsafe import Markup, escape
from matplotlib.backends.backend_svg import RendererSVG
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text
from matplotlib.transforms import Bbox

SVG_DPI = 72  # SVG user units are points: figures are measured and drawn at 72 dpi
# Space between the outermost label and the figure edge: constrained layout's default pad (3 pt).
EDGE_PAD_INCHES = 3 / 72

# Drop matplotlib's metadata (creator URL, date) so reports are reproducible and link-free.
_NO_METADATA = {"Creator": None, "Date": None, "Format": None, "Type": None}
_PROLOG = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*|<metadata>.*?</metadata>\s*", re.DOTALL)
_ROOT_SIZE = re.compile(r'(<svg\b[^>]*?)\s+width="([\d.]+)pt"\s+height="[^"]*"')
_TAG = re.compile(r"<[^<>]*>")
_DANGEROUS_TAG = re.compile(
    r"<\s*(script|foreignObject|iframe|object|embed)\b|\son[a-z]+\s*=|javascript:", re.I
)

_counter = itertools.count(1)


class UnsafeSvg(RuntimeError):
    """The SVG contained executable markup (a bug: matplotlib should have escaped it)."""


def chart_text(text: object) -> str:
    """Text for a matplotlib label: no mathtext from `$`, no legend-hiding leading underscore."""
    value = " ".join(str(text).split()).replace("$", r"\$")
    return "\u200b" + value if value.startswith("_") else value


def assert_inert(svg: str) -> None:
    for tag in _TAG.findall(svg):
        if _DANGEROUS_TAG.search(tag):
            raise UnsafeSvg(f"refusing to inline SVG with executable markup: {tag[:80]!r}")


def _prefix_ids(svg: str, prefix: str) -> str:
    """Make ids unique per chart: several inline SVGs share one HTML id namespace."""
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}-{m.group(1)}"', svg)
    return re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}-{m.group(1)})", svg)


@functools.cache
def measuring_renderer() -> RendererSVG:
    """The renderer every chart is measured with: matplotlib caches text sizes per renderer, so
    tick labels and legend entries repeated across charts are laid out once per process."""
    return RendererSVG(0, 0, io.StringIO(), image_dpi=SVG_DPI)


def _visible_extents(fig: Figure, renderer: RendererSVG) -> list[Bbox]:
    """Window extents of the axes and of everything that may stick out of them: tick and axis
    labels, titles, legends and free text. Data artists (bars, lines, markers) are clipped to
    the axes, so measuring them (as constrained layout does) would add nothing."""
    extents: list[Bbox] = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        extents.append(ax.get_window_extent(renderer))
        extents.extend(
            box
            for axis in (ax.xaxis, ax.yaxis)
            if axis.get_visible() and (box := axis.get_tightbbox(renderer)) is not None
        )
        extents.extend(
            child.get_window_extent(renderer)
            for child in ax.get_children()
            if isinstance(child, (Text, Legend)) and child.get_visible() and child.get_in_layout()
        )
    extents.extend(
        artist.get_window_extent(renderer)
        for artist in (*fig.legends, *fig.texts)
        if artist.get_visible() and artist.get_in_layout()
    )
    return [
        e for e in extents if e is not None and e.width > 0 and e.height > 0 and np.isfinite(e.bounds).all()
    ]


def fit_axes(fig: Figure, *, pad_inches: float = EDGE_PAD_INCHES) -> None:
    """Set the subplot margins so every label, legend and annotation just fits inside the figure.

    The same result as constrained layout for the single-axes charts here, from one measuring
    pass (the axes size barely moves the ticks, so a second pass changes nothing visible).
    """
    fig.set_dpi(SVG_DPI)
    renderer = measuring_renderer()
    extents = _visible_extents(fig, renderer)
    if not fig.axes or not extents:
        return
    to_inches = fig.dpi_scale_trans.inverted()
    outer = Bbox.union(extents).transformed(to_inches)
    params = fig.subplotpars
    width, height = fig.get_size_inches()
    left = params.left * width - outer.x0 + pad_inches
    right = outer.x1 - params.right * width + pad_inches
    bottom = params.bottom * height - outer.y0 + pad_inches
    top = outer.y1 - params.top * height + pad_inches
    if left + right >= width * 0.9 or bottom + top >= height * 0.9:
        return  # labels wider than the figure: keep matplotlib's default margins, still readable
    fig.subplots_adjust(
        left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height
    )


def figure_to_svg(fig: Figure, *, title: str, chart_id: str | None = None) -> Markup:
    """Inline-ready SVG: no XML prolog or DOCTYPE, unique ids, scales with its container.

    A figure without a layout engine gets its margins from :func:`fit_axes`; one with an
    engine (constrained, tight) is left to it. Call inside the chart's ``rc_context``: ticks
    are created while measuring and take the style in force."""
    prefix = chart_id or f"chart{next(_counter)}"
    buffer = io.StringIO()
    if fig.get_layout_engine() is None:
        fit_axes(fig)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": prefix}):
        # No layout engine and no bbox_inches="tight": either would draw the figure twice.
        fig.savefig(buffer, format="svg", metadata=_NO_METADATA)
    svg = _PROLOG.sub("", buffer.getvalue()).strip()
    svg = _prefix_ids(svg, re.sub(r"[^A-Za-z0-9_-]", "-", prefix))
    # Width follows the page (CSS), never wider than drawn; the viewBox keeps the aspect ratio.
    svg = _ROOT_SIZE.sub(
        lambda m: f'{m.group(1)} class="chart" style="max-width: {float(m.group(2)) * 4 / 3:.0f}px"',
        svg,
        count=1,
    )
    assert_inert(svg)  # before adding the label: an escaped title may legitimately read "onerror="
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{escape(title)}" ', 1)
    return Markup(svg)
