"""Partition-range-aware assets: one step materializes one date or a whole range of dates.

A single-run backfill (``BackfillPolicy.single_run()``, from ``gpuprice backfill`` or the Dagster
UI) hands each step every partition of the range at once. Values passed between steps are then
dicts keyed by partition (``PartitionRangeIOManager`` stores them); for one partition they stay
plain values, as in a daily run.
"""

from __future__ import annotations

import datetime as dt
import pickle
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg

# Every partitioned asset of the graph: a backfill over a range runs as one run, not one per date.
SINGLE_RUN = dg.BackfillPolicy.single_run()


def partition_dates(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> list[dt.date]:
    """The dates this step materializes, oldest first."""
    return sorted(dt.date.fromisoformat(key) for key in context.partition_keys)


def by_partition(context: dg.AssetExecutionContext, value: Any) -> dict[str, Any]:
    """An upstream value as {partition key: value}, whether this step covers one partition or many."""
    keys = list(context.partition_keys)
    if len(keys) == 1:
        return {keys[0]: value}
    return dict(value)


def as_output(context: dg.AssetExecutionContext, values: Mapping[str, Any]) -> Any:
    """The step's output: the plain value for one partition, the dict for a range."""
    keys = list(context.partition_keys)
    if len(keys) == 1:
        return values.get(keys[0])
    return {key: values.get(key) for key in keys}


class PartitionRangeIOManager(dg.ConfigurableIOManager):
    """Pickled step outputs under ``base_dir``; a range's output is ONE file for the whole range.

    Dagster's filesystem IO manager refuses outputs that cover several partitions. Here a range
    is stored as its dict (shared objects, such as one parse replayed on many dates, are pickled
    once) and read back by the next step of the same run; a later run asking for one date of a
    stored range finds it inside the newest range file that covers it.
    """

    base_dir: str

    def _folder(self, key: dg.AssetKey) -> Path:
        return Path(self.base_dir).joinpath(*key.path)

    @staticmethod
    def _name(keys: list[str]) -> str:
        return f"{keys[0]}.pickle" if len(keys) == 1 else f"{keys[0]}__{keys[-1]}.pickle"

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if context.asset_key is None:
            return
        folder = self._folder(context.asset_key)
        folder.mkdir(parents=True, exist_ok=True)
        keys = sorted(context.asset_partition_keys) if context.has_asset_partitions else []
        if len(keys) > 1 and not (isinstance(obj, dict) and set(obj) <= set(keys)):
            raise TypeError(
                f"{context.asset_key.to_user_string()}: a range output must be a dict by partition"
            )
        path = folder / (self._name(keys) if keys else "_unpartitioned.pickle")
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as handle:
            pickle.dump(obj, handle, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)

    def load_input(self, context: dg.InputContext) -> Any:
        key = context.asset_key
        folder = self._folder(key)
        if not context.has_asset_partitions:
            return _load(folder / "_unpartitioned.pickle")
        keys = sorted(context.asset_partition_keys)
        exact = folder / self._name(keys)
        if exact.exists():
            return _load(exact)
        values = {k: self._one(folder, k) for k in keys}
        return values[keys[0]] if len(keys) == 1 else values

    def _one(self, folder: Path, partition: str) -> Any:
        single = folder / f"{partition}.pickle"
        if single.exists():
            return _load(single)
        covering = []
        for path in folder.glob("*__*.pickle"):
            first, _, last = path.stem.partition("__")
            if first <= partition <= last:
                covering.append(path)
        if not covering:
            raise FileNotFoundError(f"no stored output for partition {partition} under {folder}")
        newest = max(covering, key=lambda p: p.stat().st_mtime)
        return _load(newest).get(partition)


def _load(path: Path) -> Any:
    with open(path, "rb") as handle:
        return pickle.load(handle)


# `backfill_policy` is beta in Dagster 1.13; the single-run policy is what this graph is built on.
warnings.filterwarnings("ignore", message="Parameter `backfill_policy`", category=dg.BetaWarning)


def previews(context: dg.AssetExecutionContext, entries: dict[str, Any]) -> dict[str, Any]:
    """Preview tables for the UI, on a one-date step only: Dagster copies a range step's metadata
    into every partition's materialization, and five years of copies fill the run's event log."""
    return entries if len(context.partition_keys) == 1 else {}
