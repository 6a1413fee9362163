"""Situations: the rows that share every price-independent fact.

Exists because the ranking's text output (warnings, the fixed part of ``cost_terms``) depends only
on the configuration, spot, community and the measured spot rate, not on the offer's price: it is
written once per situation and shared by its rows, which keeps the output step fast.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuprice.models.ranking.priced import PricedPairs


@dataclass(frozen=True)
class Situations:
    """``of_row``: each row's situation; ``first_row``: each situation's first row (any row would do)."""

    of_row: np.ndarray
    first_row: np.ndarray

    def __len__(self) -> int:
        return len(self.first_row)


def situations(ranked: PricedPairs, n_configs: int) -> Situations:
    """Configuration x spot x community x measured spot rate (which changes the interruptions)."""
    rates, rate = np.unique(np.nan_to_num(ranked.spot_rate, nan=-1.0), return_inverse=True)
    key = np.ravel_multi_index(
        (ranked.config, ranked.spot.astype(np.intp), ranked.community.astype(np.intp), rate),
        (n_configs, 2, 2, len(rates)),
    )
    _, first_row, of_row = np.unique(key, return_index=True, return_inverse=True)
    return Situations(of_row=of_row, first_row=first_row)
