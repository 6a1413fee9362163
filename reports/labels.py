"""Chart labels that never overlap: each label tries a few nearby spots and takes the first free one.

Matplotlib places text where it is told, so two labels of nearby points (the #1 and #2 offers,
two price changes on one day) print on top of each other. :func:`place_labels` measures every
label on the shared measuring renderer (the one ``reports.svg`` fits margins with), keeps the
ones that fit beside their point without touching another label or leaving the axes, and hides
the rest, which the caller lists instead (in the legend area or the caption).
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox

# Offsets (points) from the anchor tried in order: close around it first, then rings further out
# (a leader line, when the caller gives one, keeps a far label tied to its point).
_NEAR: tuple[tuple[float, float], ...] = (
    (6, 4),
    (6, -12),
    (-6, 4),
    (-6, -12),
    (0, 10),
    (0, -16),
)
_DIRECTIONS = ((1, 1), (-1, 1), (1, -1), (-1, -1), (0, 1), (0, -1), (1, 0), (-1, 0))
_CANDIDATES: tuple[tuple[float, float], ...] = _NEAR + tuple(
    (dx * radius, dy * radius - (8 if dy < 0 else 0)) for radius in (16, 28, 42, 60) for dx, dy in _DIRECTIONS
)
_GAP = 1.5  # points kept between two labels


def _padded(box: Bbox, pad: float = _GAP) -> Bbox:
    return Bbox.from_extents(box.x0 - pad, box.y0 - pad, box.x1 + pad, box.y1 + pad)


def _text_box(label: Annotation, renderer: RendererBase) -> Bbox:
    """The label's text alone: an annotation's own extent includes its leader line, which always
    reaches its point."""
    label.update_positions(renderer)
    return Text.get_window_extent(label, renderer)


def place_labels(
    ax: Axes, labels: Sequence[Annotation], *, keep_out: Sequence[Bbox] = ()
) -> list[Annotation]:
    """Move each annotation (``textcoords="offset points"``) to the first candidate offset where
    it overlaps no label placed before it, nothing in ``keep_out`` (display boxes) and stays
    inside the axes; labels with no free spot are hidden and returned, in order."""
    from gpuprice.reports.svg import measuring_renderer

    renderer = measuring_renderer()
    fig = ax.get_figure()
    if fig is not None:
        fig.set_dpi(72)
    inside = ax.get_window_extent(renderer)
    taken: list[Bbox] = [_padded(b) for b in keep_out]
    hidden: list[Annotation] = []
    for label in labels:
        label.set_visible(True)
        label.set_horizontalalignment("left")
        label.set_verticalalignment("bottom")
        placed = False
        for dx, dy in _CANDIDATES:
            label.set_horizontalalignment("left" if dx >= 0 else "right")
            label.xyann = (dx, dy)
            box = _text_box(label, renderer)
            within = (
                box.x0 >= inside.x0 and box.x1 <= inside.x1 and box.y0 >= inside.y0 and box.y1 <= inside.y1
            )
            if within and not any(box.overlaps(other) for other in taken):
                taken.append(_padded(box))
                placed = True
                break
        if not placed:
            label.set_visible(False)
            hidden.append(label)
    return hidden


def point_boxes(ax: Axes, points: Sequence[tuple[float, float]], radius: float = 3.0) -> list[Bbox]:
    """Small display boxes around data points, for labels to keep clear of the markers."""
    boxes = []
    for x, y in points:
        px, py = ax.transData.transform((x, y))
        boxes.append(Bbox.from_extents(px - radius, py - radius, px + radius, py + radius))
    return boxes
