"""Partition-range-aware assets: one step materializes one date or a whole range of dates.

A single-run backfill (``BackfillPolicy.single_run()``, from ``gpuprice backfill`` or the Dagster
UI) hands each step every partition of the range at once; a daily run hands it one. No value
goes from step to step (a provider's stages share a step), so no IO manager has to store ranges.
"""

from __future__ import annotations

import datetime as dt
import warnings
from typing import Any

import dagster as dg

# Every partitioned asset of the graph: a backfill over a range runs as one run, not one per date.
SINGLE_RUN = dg.BackfillPolicy.single_run()


def partition_dates(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> list[dt.date]:
    """The dates this step materializes, oldest first."""
    return sorted(dt.date.fromisoformat(key) for key in context.partition_keys)


# `backfill_policy` is beta in Dagster 1.13; the single-run policy is what this graph is built on.
warnings.filterwarnings("ignore", message="Parameter `backfill_policy`", category=dg.BetaWarning)


def previews(context: dg.AssetExecutionContext, entries: dict[str, Any]) -> dict[str, Any]:
    """Preview tables for the UI, on a one-date step only: Dagster copies a range step's metadata
    into every partition's materialization, and five years of copies fill the run's event log."""
    return entries if len(context.partition_keys) == 1 else {}
