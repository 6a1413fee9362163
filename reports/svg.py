"""Turn a matplotlib figure into an SVG fragment that can sit inline in an HTML page.

Matplotlib escapes text in SVG output (``&lt;script&gt;`` stays text), so the fragment is
marked safe for Jinja; :func:`assert_inert` re-checks that no executable markup slipped in.
"""

from __future__ import annotations

import io
import itertools
import re

import matplotlib

matplotlib.use("Agg")  # never open a window; reports are written headless

from markupsafe import Markup, escape  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

# Drop matplotlib's metadata (creator URL, date) so reports are reproducible and link-free.
_NO_METADATA = {"Creator": None, "Date": None, "Format": None, "Type": None}
_PROLOG = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*|<metadata>.*?</metadata>\s*", re.DOTALL)
_ROOT_SIZE = re.compile(r'(<svg\b[^>]*?)\s+width="([\d.]+)pt"\s+height="[^"]*"')
_TAG = re.compile(r"<[^<>]*>")
_DANGEROUS_TAG = re.compile(r"<\s*(script|foreignObject|iframe|object|embed)\b|\son[a-z]+\s*=|javascript:", re.I)

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


def figure_to_svg(fig: Figure, *, title: str, chart_id: str | None = None) -> Markup:
    """Inline-ready SVG: no XML prolog or DOCTYPE, unique ids, scales with its container."""
    prefix = chart_id or f"chart{next(_counter)}"
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": prefix}):
        # Constrained layout (set when the figure is made) already fits labels and legends;
        # bbox_inches="tight" would draw the figure a second time.
        fig.savefig(buffer, format="svg", metadata=_NO_METADATA)
    svg = _PROLOG.sub("", buffer.getvalue()).strip()
    svg = _prefix_ids(svg, re.sub(r"[^A-Za-z0-9_-]", "-", prefix))
    # Width follows the page (CSS), never wider than drawn; the viewBox keeps the aspect ratio.
    svg = _ROOT_SIZE.sub(
        lambda m: f'{m.group(1)} class="chart" style="max-width: {float(m.group(2)) * 4 / 3:.0f}px"', svg, count=1
    )
    assert_inert(svg)  # before adding the label: an escaped title may legitimately read "onerror="
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{escape(title)}" ', 1)
    return Markup(svg)
