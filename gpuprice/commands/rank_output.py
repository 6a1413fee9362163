"""How ``gpuprice rank`` prints a ranking: JSON objects, CSV with each cost term as a column, or a
table that fits the terminal.

Exists so that the rank command's output contract (field order, rounding, the CSV's columns, the
table's columns and their priorities) is read and changed in one place, apart from the command.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

import pandas as pd

from gpuprice.commands.output import write_csv, write_json
from gpuprice.commands.tables import Column, number, print_table
from gpuprice.models.cost import COST_COMPONENTS
from gpuprice.models.throughput_band import low_high

FORMATS = ("table", "json", "csv")
# Contract fields first, then the rest of the ranking row.
JSON_FIELDS = (
    "rank",
    "provider",
    "gpu",
    "gpu_count",
    "tier",
    "community",
    "usd_per_gpu_hour",
    "per_gpu_gb",
    "hours",
    "run_cost_usd",
    "total_cost_usd",
    "cost_per_checkpoint_usd",
    "price_basis",
    "observed_on",
    "price_age_days",
    "warnings",
    "verdict",
    "excluded_by",
    "headroom_gb",
    "sku",
    "nodes",
    "commitment_months",
    "sharding",
    "tokens_per_sec_per_gpu",
    "mfu",
    "price_snapshot_date",
    "workload",
    "snapshot_date",
    "cost_terms",
    "region",
    "preemption_rate_per_node_hour",
    "preemption_rate_source",
)
# Every cost term (models.cost / models/ranking/cost_terms.py) as its own CSV column.
TERM_COLUMNS = (
    *COST_COMPONENTS,
    "total_usd",
    "checkpoints",
    "compute_hours",
    "orchestration_hours",
    "rework_hours",
    "wall_hours",
    "expected_interruptions",
    "checkpoint_gb",
    "dataset_gb",
    "model_download_gb",
)
# The throughput error band's ends as CSV columns, after every other column: (record field, end).
BAND_CSV_COLUMNS = {
    "hours_low": ("hours_band", "low"),
    "hours_high": ("hours_band", "high"),
    "total_cost_low_usd": ("cost_band", "low"),
    "total_cost_high_usd": ("cost_band", "high"),
}
_ROUND = {
    "per_gpu_gb": 3,
    "headroom_gb": 3,
    "hours": 4,
    "run_cost_usd": 2,
    "total_cost_usd": 2,
    "cost_per_checkpoint_usd": 4,
    "tokens_per_sec_per_gpu": 2,
    "mfu": 4,
    "usd_per_gpu_hour": 4,
}


def _value(name: str, value: Any) -> Any:
    """A ranking cell as plain JSON (dates as ISO text, NA as null, cost_terms parsed)."""
    if name == "cost_terms":
        return json.loads(value) if isinstance(value, str) else value
    if name in ("warnings", "excluded_by"):
        return list(value) if value is not None else []
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if name in _ROUND and isinstance(value, float):
        return round(value, _ROUND[name])
    return value


def _band(row: dict[Any, Any], low: str, high: str, digits: int) -> dict[str, float] | None:
    """``{low, high}`` from two ranking columns; None where the ranking has none (stored before)."""
    ends = (_value(low, row.get(low)), _value(high, row.get(high)))
    return None if None in ends else low_high(ends[0], ends[1], digits)


def ranking_records(ranked: pd.DataFrame) -> list[dict[str, Any]]:
    """The ``rank --format json`` objects."""
    records = [
        {name: _value(name, row[name]) for name in JSON_FIELDS} for row in ranked.to_dict(orient="records")
    ]
    for record, row in zip(records, ranked.to_dict(orient="records"), strict=True):
        # the contract's observed_on: the date of the page the price was read from
        record.setdefault("observed_on", record.get("price_snapshot_date"))
        if "band_low_gb" in row:  # the out-of-sample error band around per_gpu_gb
            record["band_gb"] = {"low": round(row["band_low_gb"], 3), "high": round(row["band_high_gb"], 3)}
        # the throughput error band (models/throughput_band.py) as hours and total cost
        record["hours_band"] = _band(row, "hours_low", "hours_high", 4)
        record["cost_band"] = _band(row, "total_cost_low_usd", "total_cost_high_usd", 2)
    return records


def _hours(value: float) -> str:
    return f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def _money(value: float) -> str:
    return number(value, 2)


# (column, priority): 0 always shown; the rest give way, highest number first, on a narrow terminal.
TABLE_COLUMNS = (
    Column("#", 0, numeric=True),
    Column("provider", 0),
    Column("GPUs", 0, wrap=True),
    Column("tier", 0, wrap=True),
    Column("$/GPU-h", 1, numeric=True),
    Column("total $", 0, numeric=True),
    Column("total $ band", 2, numeric=True),
    Column("$/checkpoint", 0, numeric=True),
    Column("GPU time $", 4, numeric=True),
    Column("start-up $", 5, numeric=True),
    Column("rework $", 5, numeric=True),
    Column("other $", 6, numeric=True),
    Column("wall h", 3, numeric=True),
    Column("sharding", 4),
    Column("GB/GPU", 4, numeric=True),
    Column("tok/s/GPU", 4, numeric=True),
    Column("warnings", 0, wrap=True),
)


def tier_label(record: dict[str, Any]) -> str:
    """The tier as readers say it: ``on_demand (community)``, ``reserved 12 mo``, ``spot, from``."""
    return (
        record["tier"]
        + (" (community)" if record["community"] else "")
        + (f" {record['commitment_months']} mo" if record["commitment_months"] else "")
        + (f" ({record['price_basis']} price)" if record.get("price_basis") not in (None, "list") else "")
    )


def _print_table(records: list[dict[str, Any]], title: str, *, wide: bool = False) -> None:
    rows = []
    for r in records:
        terms = r["cost_terms"] or {}
        other = sum(terms.get(k, 0.0) for k in ("storage_usd", "data_usd", "engineer_usd")) - terms.get(
            "reusable_value_usd", 0.0
        )
        codes = [w.split(":", 1)[0] for w in r["warnings"]]
        if r["excluded_by"]:
            codes.insert(0, "EXCLUDED(" + ",".join(r["excluded_by"]) + ")")
        rows.append(
            [
                str(r["rank"]),
                r["provider"],
                f"{r['gpu_count']}x {r['gpu']}" + (f" ({r['nodes']} nodes)" if r["nodes"] > 1 else ""),
                tier_label(r),
                number(r["usd_per_gpu_hour"], 2),
                _money(r["total_cost_usd"]),
                range_text(r.get("cost_band"), _money),
                _money(r["cost_per_checkpoint_usd"]),
                _money(r["run_cost_usd"]),
                _money(terms.get("orchestration_usd", 0.0)),
                _money(terms.get("rework_usd", 0.0)),
                _money(other),
                _hours(terms.get("wall_hours", r["hours"])),
                r["sharding"],
                number(r["per_gpu_gb"], 1),
                number(r["tokens_per_sec_per_gpu"], 0),
                " ".join(codes),
            ]
        )
    print_table(TABLE_COLUMNS, rows, title=title, wide=wide)


def range_text(band: dict[str, float] | None, text: Any) -> str:
    """A band as ``low-high`` in the table's number format ('' where the ranking has none)."""
    return "" if not band else f"{text(band['low'])}-{text(band['high'])}"


def csv_columns() -> list[str]:
    return [c for c in JSON_FIELDS if c != "cost_terms"] + list(TERM_COLUMNS) + list(BAND_CSV_COLUMNS)


def _cell(record: dict[str, Any], column: str) -> Any:
    if column in TERM_COLUMNS:
        return (record["cost_terms"] or {}).get(column)
    if column in BAND_CSV_COLUMNS:
        field, end = BAND_CSV_COLUMNS[column]
        return (record.get(field) or {}).get(end)
    value = record[column]
    return "; ".join(value) if column in ("warnings", "excluded_by") else value


def _write_csv(records: list[dict[str, Any]]) -> None:
    columns = csv_columns()
    write_csv(columns, ([_cell(record, c) for c in columns] for record in records))


def write_ranking(records: list[dict[str, Any]], format: str, title: str, *, wide: bool = False) -> None:
    """The records on stdout in ``format`` (one of FORMATS)."""
    if format == "json":
        write_json(records)
    elif format == "csv":
        _write_csv(records)
    else:
        _print_table(records, title, wide=wide)
