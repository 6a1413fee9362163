"""Small helpers for Dagster asset metadata."""

from __future__ import annotations

import pandas as pd


def frame_markdown(frame: pd.DataFrame, limit: int = 10) -> str:
    """A Markdown table of the first rows (pipes in cells escaped)."""
    if frame.empty:
        return "_no rows_"
    head = frame.head(limit)
    cols = [str(c) for c in head.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in head.itertuples(index=False):
        cells = ["" if pd.isna(v) else (f"{v:,.4g}" if isinstance(v, float) else str(v)) for v in row]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
