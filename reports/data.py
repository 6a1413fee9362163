"""The report data layer: everything a report shows, already selected for one ISO week.

Loading (``reports.loading``) fills these from the warehouse; rendering (``reports.render``) only
reads them. Tests can build them by hand or from a small hand-made warehouse. The memory verdict's
models are in ``reports.memory_verdict``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import Field, model_validator

from gpuprice.reports.comparison import KindBest, NoCapacity
from gpuprice.reports.memory_verdict import MemoryFitRow, MemoryVerdict
from gpuprice.reports.report_model import FrozenModel as _Frozen
from gpuprice.reports.weeks import IsoWeek
from gpuprice.warehouse.staleness import PRICE_AGE


class ProviderFreshness(_Frozen):
    """How current one provider's prices are, as of the report's date."""

    provider: str
    last_success_date: dt.date | None = None
    last_attempt_date: dt.date | None = None
    last_status: str | None = None
    last_error: str | None = None
    offers: int | None = Field(default=None, description="offers in the newest snapshot used")
    stale: bool = True
    days_since_success: int | None = None
    # Drift, from the newest attempt: which reader parsed the page and how many rows it rejected.
    parse_strategy: str | None = Field(default=None, description="structured or fallback")
    rejected: int | None = None


class _SnapshotOffer(_Frozen):
    """Which offer of which snapshot: what price changes and current prices are about."""

    snapshot_date: dt.date
    provider: str
    sku: str
    gpu: str
    gpu_raw: str
    gpu_count: int
    tier: str
    community: bool = False
    commitment_months: int | None = None
    region: str | None = None
    price_basis: str | None = None


class PriceChange(_SnapshotOffer):
    """One offer whose price at the week's end differs from its last observation before the week.

    ``snapshot_date``: the page date the new price was first seen this week;
    ``previous_snapshot_date``: the page date of the baseline (the last price before the week).
    """

    previous_snapshot_date: dt.date | None = None
    old_usd_per_gpu_hour: float
    new_usd_per_gpu_hour: float

    @property
    def baseline_age_days(self) -> int | None:
        """Days between the baseline observation and the change."""
        if self.previous_snapshot_date is None:
            return None
        return (self.snapshot_date - self.previous_snapshot_date).days

    @property
    def change(self) -> float:
        """Relative change as a fraction (+0.123 = 12.3 % dearer)."""
        if self.old_usd_per_gpu_hour == 0:
            return 0.0
        return (self.new_usd_per_gpu_hour - self.old_usd_per_gpu_hour) / self.old_usd_per_gpu_hour


class PricedOffer(_SnapshotOffer):
    """An offer from the snapshot a report treats as current (e.g. the cheapest per GPU type)."""

    usd_per_gpu_hour: float
    observed_on: dt.date | None = Field(default=None, description="the date of the page the price is from")

    def price_age_days(self, as_of: dt.date) -> int | None:
        """Age on ``as_of`` of the page the price was read from."""
        seen = self.observed_on or self.snapshot_date
        return max((as_of - seen).days, 0)

    offers_for_gpu: int = Field(default=1, description="offers for this GPU type and tier across providers")
    providers_for_gpu: int = 1


class GpuCheapest(_Frozen):
    """The cheapest current offer of one GPU type per tier."""

    gpu: str
    on_demand: PricedOffer | None = None
    spot: PricedOffer | None = None
    reserved: PricedOffer | None = None
    providers: int = 0


class SourceSnapshot(_Frozen):
    """Which snapshot of one provider a report used, and where that snapshot came from."""

    provider: str
    current_snapshot_date: dt.date | None = None
    week_snapshot_dates: list[dt.date] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    offers: int = 0


class DefinitionItem(_Frozen):
    label: str
    value: str


class CostAssumption(_Frozen):
    """One term of the cost model as a workload sets it (``overridden``: differs from the default)."""

    label: str
    value: str
    note: str | None = None
    overridden: bool = False


class WorkloadDefinition(_Frozen):
    """A workload as readers need it: what is trained, how, and under which assumptions."""

    name: str
    description: str | None = None
    items: list[DefinitionItem] = Field(default_factory=list)
    deadline_hours: float | None = None
    in_catalog: bool = True


class RankedOffer(_Frozen):
    rank: int
    provider: str
    sku: str
    gpu: str
    gpu_count: int
    nodes: int = 1
    tier: str
    community: bool = False
    commitment_months: int | None = None
    price_basis: str | None = None
    usd_per_gpu_hour: float
    sharding: str
    per_gpu_gb: float
    tokens_per_sec_per_gpu: float
    mfu: float
    hours: float
    run_cost_usd: float = Field(description="GPU time only: one term of the total")
    total_cost_usd: float = Field(default=0.0, description="the run's total: every cost term")
    cost_per_checkpoint_usd: float
    cost_terms: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    price_snapshot_date: dt.date | None = None
    observed_on: dt.date | None = None
    excluded_by: list[str] = Field(default_factory=list, description="'price_age': not a current price")
    # The throughput error band (models/throughput_band.py) as the ranking costed it; None in
    # rankings stored before it was kept.
    hours_low: float | None = None
    hours_high: float | None = None
    total_cost_low_usd: float | None = None
    total_cost_high_usd: float | None = None

    @property
    def current(self) -> bool:
        """Whether the price is current (warehouse/staleness.py): only current offers are recommended."""
        return PRICE_AGE not in self.excluded_by

    @model_validator(mode="before")
    @classmethod
    def _total(cls, data: Any) -> Any:
        """Rankings stored before the total had its own column: the cost terms' total, else GPU time."""
        if isinstance(data, dict) and data.get("total_cost_usd") is None:
            terms = data.get("cost_terms") or {}
            value = terms.get("total_usd") if isinstance(terms, dict) else None
            if isinstance(value, (int, float)) and value > 0:
                data = {**data, "total_cost_usd": float(value)}
            else:
                data = {**data, "total_cost_usd": data.get("run_cost_usd", 0.0)}
        return data

    @property
    def gpu_hours(self) -> float:
        return self.hours * self.gpu_count

    @property
    def startup_cost_usd(self) -> float:
        """Billed start-up and model download (``orchestration_usd``)."""
        return float(self.cost_terms.get("orchestration_usd") or 0.0)

    @property
    def rework_cost_usd(self) -> float:
        return float(self.cost_terms.get("rework_usd") or 0.0)

    @property
    def other_cost_usd(self) -> float:
        """Storage, data movement and engineering, less reusable value."""
        terms = self.cost_terms
        return float(
            sum(float(terms.get(k) or 0.0) for k in ("storage_usd", "data_usd", "engineer_usd"))
            - float(terms.get("reusable_value_usd") or 0.0)
        )

    @property
    def warning_codes(self) -> list[str]:
        return [w.split(":", 1)[0] for w in self.warnings]

    def price_age_days(self, as_of: dt.date) -> int | None:
        """Age on ``as_of`` of the page the price was read from."""
        seen = self.observed_on or self.price_snapshot_date
        return (as_of - seen).days if seen is not None else None

    @property
    def wall_hours(self) -> float:
        """Expected time to the last checkpoint (start-up and rework included) when the ranking says."""
        value = self.cost_terms.get("wall_hours")
        return float(value) if isinstance(value, (int, float)) and value > 0 else self.hours


# An offer that only comes as a whole node for a job one card holds is not right-sized: the reports
# recommend the best offer without this warning (models.ranking) and name the overall #1 beside it.
OVERSIZED_WARNING = "whole-node"


def recommended(offers: list[RankedOffer]) -> RankedOffer | None:
    """The best right-sized offer: the lowest rank without :data:`OVERSIZED_WARNING`, else #1
    (current prices only: an older price is never recommended)."""
    ranked = sorted((o for o in offers if o.current), key=lambda o: o.rank)
    return next(
        (o for o in ranked if OVERSIZED_WARNING not in o.warning_codes), ranked[0] if ranked else None
    )


def cheapest_overall(offers: list[RankedOffer]) -> RankedOffer | None:
    """Rank #1 when it is not the recommended offer (an oversized node), else None."""
    first = min((o for o in offers if o.current), key=lambda o: o.rank, default=None)
    return first if first is not None and first is not recommended(offers) else None


class PriceSeries(_Frozen):
    """Daily cheapest on-demand price of one GPU type at one provider (one line on a chart)."""

    gpu: str
    provider: str
    label: str
    points: list[tuple[dt.date, float]]


class GpuPriceHistory(_Frozen):
    gpu: str
    series: list[PriceSeries] = Field(default_factory=list)
    changes: list[PriceChange] = Field(default_factory=list, description="this week's changes")


class ReportMeta(_Frozen):
    """When and from what a report was made."""

    week: IsoWeek
    as_of: dt.date = Field(description="newest snapshot date at or before the week's end")
    generated_at: dt.datetime
    sources: list[SourceSnapshot] = Field(default_factory=list)
    warehouse: str | None = None
    lag_days: int = Field(
        default=0, description="days between the newest snapshot and the week's end (or today, mid-week)"
    )
    status: list[str] = Field(default_factory=list, description="reports.status: how current the data is")
    status_warn: bool = False


class WorkloadSummary(_Frozen):
    name: str
    description: str | None = None
    best: RankedOffer | None = Field(default=None, description="the best right-sized offer")
    cheapest_overall: RankedOffer | None = Field(default=None, description="#1 when oversized")
    offers_ranked: int = 0
    fitting_gpu_types: int = 0
    swept: bool = Field(default=True, description="a memory-fit sweep exists for this workload")


class WeekOverview(_Frozen):
    """Data behind ``index.html`` and ``summary.md``."""

    meta: ReportMeta
    freshness: list[ProviderFreshness]
    changes: list[PriceChange]
    changes_total: int = 0
    offers_without_baseline: int = Field(
        default=0, description="offers seen this week with no earlier scraped price to compare"
    )
    cheapest: list[GpuCheapest]
    older_cheapest: list[GpuCheapest] = Field(
        default_factory=list, description="older on-demand prices below the current cheapest: shown apart"
    )
    unknown_gpu_offers: int = Field(default=0, description="current offers whose GPU could not be mapped")
    workloads: list[WorkloadSummary]


class WorkloadReport(_Frozen):
    """Data behind ``<workload>.html`` and ``<workload>.md``."""

    meta: ReportMeta
    definition: WorkloadDefinition
    memory: MemoryVerdict
    rankings: list[RankedOffer]
    older: list[RankedOffer] = Field(
        default_factory=list,
        description="offers whose price is older than the limit: shown apart, never used",
    )
    rankings_total: int = 0
    rankings_snapshot_date: dt.date | None = None
    cost_assumptions: list[CostAssumption] = Field(default_factory=list)
    best_costs: list[DefinitionItem] = Field(default_factory=list, description="best offer, term by term")
    price_history: list[GpuPriceHistory] = Field(default_factory=list)
    changes: list[PriceChange] = Field(
        default_factory=list, description="this week's changes of GPUs that fit"
    )
    best_fit: MemoryFitRow | None = Field(
        default=None, description="the memory-fit row of the recommended offer's setup"
    )
    speed_band_note: str | None = Field(
        default=None, description="what the hours and cost ranges rest on (the throughput band)"
    )

    @property
    def best(self) -> RankedOffer | None:
        """The recommended offer: the best right-sized one (:func:`recommended`)."""
        return recommended(self.rankings)

    @property
    def cheapest_overall(self) -> RankedOffer | None:
        return cheapest_overall(self.rankings)

    # GPU clouds vs hyperscalers vs marketplace (reports/comparison.py, templates/comparison.html.j2).
    comparison: list[KindBest] = Field(default_factory=list)
    no_capacity: list[NoCapacity] = Field(default_factory=list)
