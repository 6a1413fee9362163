"""The weekly workload report's "GPU clouds vs hyperscalers vs marketplace" section, and the
offers with no capacity seen for a week: data loaders for ``templates/comparison.html.j2``.

Self-contained on purpose: the section is one macro call in each workload template and one
field pair on :class:`~gpuprice.reports.data.WorkloadReport`, so the report layout can change
around it. The numbers come from the views ``v_cloud_vs_hyperscaler`` and ``v_capacity_watch``
(warehouse/views.py).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from gpuprice.warehouse.sql_files import sql

if TYPE_CHECKING:  # the chart helper imports these models without loading DuckDB
    import duckdb

KIND_LABELS: dict[str, str] = {
    "gpu_cloud": "GPU cloud",
    "hyperscaler": "Hyperscaler",
    "marketplace": "Marketplace",
}


class KindBest(BaseModel):
    """The best-ranked offer of one kind of provider for a workload."""

    model_config = ConfigDict(frozen=True)

    provider_kind: str
    provider: str
    sku: str
    gpu: str
    gpu_count: int
    nodes: int
    tier: str
    community: bool
    region: str | None = None
    price_basis: str | None = None
    usd_per_gpu_hour: float
    hours: float
    total_cost_usd: float | None = None  # rankings stored before total costs were kept
    cost_per_checkpoint_usd: float
    ratio_to_best: float

    @property
    def kind_label(self) -> str:
        return KIND_LABELS.get(self.provider_kind, self.provider_kind)


class NoCapacity(BaseModel):
    """An offer whose source states availability, without capacity seen for ``window_days``."""

    model_config = ConfigDict(frozen=True)

    provider: str
    gpu: str
    gpu_raw: str
    gpu_count: int
    community: bool
    last_capacity_date: dt.date | None = None
    first_reported: dt.date
    as_of_date: dt.date
    window_days: int


def _rows(con: duckdb.DuckDBPyConnection, query: str, params: list[object]) -> list[dict[str, object]]:
    cursor = con.execute(query, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def cloud_vs_hyperscaler(
    con: duckdb.DuckDBPyConnection, workload: str, snapshot_date: dt.date | None
) -> list[KindBest]:
    """Best offer per provider kind for ``workload`` on ``snapshot_date``, cheapest first."""
    if snapshot_date is None:
        return []
    rows = _rows(con, sql("reports/cloud_vs_hyperscaler"), [workload, snapshot_date])
    return [KindBest.model_validate(row) for row in rows]


def no_capacity(con: duckdb.DuckDBPyConnection) -> list[NoCapacity]:
    """Offers with no capacity seen in the watch window (as of the newest snapshot)."""
    return [NoCapacity.model_validate(row) for row in _rows(con, sql("reports/capacity_watch"), [])]
