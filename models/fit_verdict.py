"""Does a predicted peak fit a card? The one rule behind ``fit``, ``estimate``, ``rank`` and the sweep.

The planning margin is the fraction of the card kept free (``--margin``, 0 to 0.9, default 0.2):

* ``fits``          the card keeps at least ``margin x capacity`` free beside the predicted peak;
* ``tight``         the predicted peak fits, the margin does not (ranked, with a ``tight-fit``
                    warning naming the headroom);
* ``does_not_fit``  the predicted peak is above the card (excluded from rankings).

``capacity_gb`` is the card's usable memory in 1e9 bytes (``models/catalog.py``
``usable_memory_gb``: an "80 GB" A100 holds 80 GiB = 85.9e9 bytes), and the peak is the device
figure (what nvidia-smi shows: CUDA context and allocator slack included), so both sides count
the same bytes. ``headroom_gb`` = capacity - peak. ``planning_gb`` = peak / (1 - margin): the card
size that keeps the margin free. With an error band (``models/memory_band.py``) the verdict says
when the band's ends fall on the other side of the capacity or of the margin line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from gpuprice.errors import BadInput

Verdict = Literal["fits", "tight", "does_not_fit"]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
DEFAULT_MARGIN = 0.20
MARGIN_MIN, MARGIN_MAX = 0.0, 0.9
TIGHT_FIT_WARNING = "tight-fit"


def check_margin(margin: float) -> float:
    """The margin as a float in [0, 0.9]; BadInput naming the value and the valid range."""
    value = float(margin)
    if not (MARGIN_MIN <= value <= MARGIN_MAX):  # also rejects NaN
        raise BadInput(
            f"margin {margin!r} is outside the valid range: a fraction of the card kept free, "
            f"{MARGIN_MIN:g} to {MARGIN_MAX:g} (default {DEFAULT_MARGIN:g})"
        )
    return value


def planning_gb(peak_gb: float, margin: float) -> float:
    """The card size that holds ``peak_gb`` and keeps ``margin`` of itself free."""
    return peak_gb / (1.0 - margin)


@dataclass(frozen=True)
class FitVerdict:
    verdict: Verdict
    fits: bool  # the predicted peak fits the card (margin aside)
    headroom_gb: float  # capacity - predicted peak (negative: over)
    margin_gb: float  # margin x capacity: the headroom asked for
    band_crosses_capacity: bool  # the band's high end is above the card, its low end below
    band_crosses_margin: bool  # the band straddles the margin line (fits <-> tight)

    def note(self) -> str:
        """One line for people: the verdict, the headroom and what the band says about it."""
        head = {
            "fits": f"fits with {self.headroom_gb:.1f} GB free (margin asks {self.margin_gb:.1f} GB)",
            "tight": f"tight: {self.headroom_gb:.1f} GB free, under the {self.margin_gb:.1f} GB margin",
            "does_not_fit": f"does not fit: {-self.headroom_gb:.1f} GB over the card",
        }[self.verdict]
        if self.band_crosses_capacity:
            head += "; the error band crosses the card's capacity (may or may not fit)"
        elif self.band_crosses_margin:
            head += "; the error band crosses the margin line"
        return head

    def warning(self) -> str | None:
        """The ranking's ``tight-fit`` warning (None unless tight)."""
        if self.verdict != "tight":
            return None
        return f"{TIGHT_FIT_WARNING}: {self.headroom_gb:.1f} GB headroom, under the {self.margin_gb:.1f} GB margin"


def verdict_codes(peak_gb: np.ndarray, capacity_gb: np.ndarray, margin: np.ndarray) -> np.ndarray:
    """0 fits, 1 tight, 2 does_not_fit, element-wise (the same rule as :func:`judge`)."""
    headroom = np.asarray(capacity_gb, dtype=np.float64) - np.asarray(peak_gb, dtype=np.float64)
    wanted = np.asarray(margin, dtype=np.float64) * np.asarray(capacity_gb, dtype=np.float64)
    return np.where(headroom < 0, 2, np.where(headroom < wanted, 1, 0)).astype(np.int64)


def judge(
    peak_gb: float, capacity_gb: float, margin: float, band: tuple[float, float] | None = None
) -> FitVerdict:
    """The verdict of one predicted device peak on a card of ``capacity_gb`` (both 1e9 bytes).

    ``band`` = (low, high) GB: where the out-of-sample validation puts the real peak."""
    code = int(verdict_codes(np.array([peak_gb]), np.array([capacity_gb]), np.array([margin]))[0])
    margin_gb = margin * capacity_gb
    crosses_capacity = crosses_margin = False
    if band is not None:
        low, high = band
        crosses_capacity = low <= capacity_gb < high
        crosses_margin = low <= capacity_gb - margin_gb < high
    return FitVerdict(
        verdict=VERDICTS[code],
        fits=code < 2,
        headroom_gb=capacity_gb - peak_gb,
        margin_gb=margin_gb,
        band_crosses_capacity=crosses_capacity,
        band_crosses_margin=crosses_margin,
    )
