"""Distinct pairs of two integer columns: the one way the ranking shares work between rows.

Exists because several steps compute something once per distinct pair (a card is a GPU slug and
its memory; a staleness warning is per provider and price date; PCIe is per card and GPU count;
a row's warnings per situation and price date) and then copy it to every row of that pair.
"""

from __future__ import annotations

import numpy as np


def distinct_pairs(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(each row's index into the distinct pairs, the pairs' first values, the pairs' second values)
    of two columns of non-negative integers (codes); pairs in (first, second) order."""
    if len(first) == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, empty
    shape = (int(first.max()) + 1, int(second.max()) + 1)
    present, of_row = np.unique(np.ravel_multi_index((first, second), shape), return_inverse=True)
    first_values, second_values = np.unravel_index(present, shape)
    return of_row, first_values, second_values
