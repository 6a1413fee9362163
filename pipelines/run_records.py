"""What a scrape run recorded in the warehouse's ``provider_runs``: the one account of a
provider's outcome per date that ``gpuprice run`` and ``gpuprice backfill`` report."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd

from gpuprice.warehouse.connection import connect_read_only, warehouse_exists
from gpuprice.warehouse.queries import provider_runs_of_run


def recorded_rows(warehouse: Path, run_id: str) -> pd.DataFrame:
    """provider_runs rows the run ``run_id`` wrote (empty when the warehouse was never made)."""
    if not warehouse_exists(warehouse):
        return pd.DataFrame(columns=["provider", "snapshot_date", "status", "offers", "error"])
    con = connect_read_only(warehouse)
    try:
        return provider_runs_of_run(con, run_id)
    finally:
        con.close()


def text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def as_date(value: object) -> dt.date | None:
    if value is None or value is pd.NaT or (isinstance(value, float) and value != value):
        return None
    return pd.Timestamp(value).date()  # type: ignore[arg-type]
