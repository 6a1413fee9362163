"""Assemble one week's report data (overview + one report per workload) from the warehouse."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb

from gpuprice.reports import changes as changes_module
from gpuprice.reports import comparison, costs, loading, workload_info
from gpuprice.reports.comparison import NoCapacity
from gpuprice.reports.data import (
    GpuCheapest,
    PriceChange,
    RankedOffer,
    ReportMeta,
    WeekOverview,
    WorkloadReport,
    WorkloadSummary,
    recommended,
)
from gpuprice.reports.memory_verdict import GpuCapacity, MemoryFitRow, MemoryVerdict
from gpuprice.reports.status import data_status
from gpuprice.reports.weeks import IsoWeek

TOP_CHANGES = 12
HISTORY_GPUS = 4  # price-history charts per workload report: the GPU types of the best offers
OLDER_SHOWN = 5  # older observations listed on a workload page (the best of them per checkpoint)


def build_meta(
    con: duckdb.DuckDBPyConnection, week: IsoWeek, generated_at: dt.datetime, warehouse: str | None
) -> ReportMeta:
    as_of = loading.as_of_date(con, week)
    # A week still in progress is only judged up to today: Wednesday's data is current on Wednesday.
    reference = min(week.end, generated_at.astimezone(dt.UTC).date())
    return ReportMeta(
        week=week,
        as_of=as_of,
        lag_days=max((reference - as_of).days, 0),
        generated_at=generated_at,
        sources=loading.sources_used(con, week),
        warehouse=warehouse,
    )


def workload_order(con: duckdb.DuckDBPyConnection, week: IsoWeek, catalog: Mapping[str, Any]) -> list[str]:
    """Catalog workloads in catalog order, then workloads only the warehouse knows (e.g. retired)."""
    known = list(catalog)
    return known + [name for name in loading.workload_names(con, week) if name not in catalog]


def build_workload_report(
    con: duckdb.DuckDBPyConnection,
    week: IsoWeek,
    name: str,
    workload: Any | None,
    *,
    meta: ReportMeta,
    changes: Sequence[PriceChange],
    cheapest: Sequence[GpuCheapest],
    fit: loading.MemoryFit,
    no_capacity: Sequence[NoCapacity],
    in_catalog: bool = True,
) -> WorkloadReport:
    ranked_on = loading.rankings_date(con, name, week)
    everything = loading.rankings(con, name, ranked_on) if ranked_on else []
    # Only current prices are ranked and recommended; older ones are listed apart with their age.
    ranked = [offer for offer in everything if offer.current]
    older = [offer for offer in everything if not offer.current][:OLDER_SHOWN]
    fit_rows, computed_at = fit
    # Only the GPU counts the workload may use (a sweep stored before limits were applied has more).
    limit = getattr(workload, "gpu_limit", None)
    if isinstance(limit, int):
        fit_rows = [row for row in fit_rows if row.gpu_count <= limit]
    margin = workload_info.planning_margin(fit_rows)
    method = getattr(workload, "method", None)
    fit_rows = workload_info.with_verdicts(fit_rows, margin, method)
    bars, note = workload_info.memory_bars(workload, fit_rows, ranked)
    # The verdict lists the GPU types on offer this week (the sweep covers the whole catalog).
    offered = sorted({c.gpu for c in cheapest} & {row.gpu for row in fit_rows})
    memory = MemoryVerdict(
        rows=fit_rows,
        offered_gpus=offered,
        bars=bars,
        capacities=_capacities(con, offered or sorted({row.gpu for row in fit_rows}), fit_rows),
        breakdown_note=note,
        planning_margin=margin,
        computed_at=computed_at,
        band_note=workload_info.band_note(method),
    )
    fitting_gpus = {row.gpu for row in fit_rows if row.fits_on_gpu} | {offer.gpu for offer in ranked}
    history_gpus = _history_gpus(ranked, memory, cheapest)
    relevant_changes = [c for c in changes if c.gpu in fitting_gpus]
    definition = workload_info.describe(
        name, workload, rankings=ranked, planning_margin=margin, in_catalog=in_catalog
    )
    best = recommended(ranked)
    return WorkloadReport(
        meta=meta,
        definition=definition,
        memory=memory,
        rankings=ranked,
        older=older,
        rankings_total=len(ranked),
        rankings_snapshot_date=ranked_on,
        cost_assumptions=costs.assumptions(workload, best),
        best_costs=costs.best_offer_costs(best),
        price_history=loading.price_history(con, history_gpus, week, changes),
        changes=relevant_changes,
        best_fit=_fit_of(best, fit_rows),
        speed_band_note=workload_info.speed_band_note(method),
        comparison=comparison.cloud_vs_hyperscaler(con, name, ranked_on),
        no_capacity=list(no_capacity),
    )


def _fit_of(best: RankedOffer | None, rows: Sequence[MemoryFitRow]) -> MemoryFitRow | None:
    """The sweep's row for the recommended offer's GPU, count and sharding."""
    if best is None:
        return None
    return next(
        (r for r in rows if (r.gpu, r.gpu_count, r.sharding) == (best.gpu, best.gpu_count, best.sharding)),
        None,
    )


def _capacities(
    con: duckdb.DuckDBPyConnection, gpus: Sequence[str], rows: Sequence[MemoryFitRow]
) -> list[GpuCapacity]:
    """Memory sizes of ``gpus`` from the GPU catalog, or from the sweep when dim_gpu is empty."""
    found = loading.gpu_capacities(con, gpus)
    if found:
        return found
    wanted = set(gpus)
    sizes = {row.gpu: row.gpu_memory_gb for row in rows if row.gpu in wanted}
    return [GpuCapacity(gpu=g, memory_gb=m) for g, m in sorted(sizes.items(), key=lambda kv: (kv[1], kv[0]))]


def _history_gpus(
    ranked: Sequence[RankedOffer], memory: MemoryVerdict, cheapest: Sequence[GpuCheapest]
) -> list[str]:
    """GPU types worth a price-history chart: those of the best-ranked offers, else the cheapest that fit."""
    chosen: list[str] = []
    for offer in sorted(ranked, key=lambda o: o.rank):
        if offer.gpu not in chosen and offer.gpu != "unknown":
            chosen.append(offer.gpu)
    if not chosen:
        fitting = {row.gpu for row in memory.fitting}
        priced = [c for c in cheapest if c.gpu in fitting and c.on_demand is not None]
        chosen = [c.gpu for c in sorted(priced, key=lambda c: c.on_demand.usd_per_gpu_hour)]  # type: ignore[union-attr]
    return chosen[:HISTORY_GPUS]


def _older_cheaper(older: Sequence[GpuCheapest], current: Sequence[GpuCheapest]) -> list[GpuCheapest]:
    """Older on-demand prices below the current cheapest of their GPU (or of a GPU without one)."""
    now = {c.gpu: c.on_demand.usd_per_gpu_hour for c in current if c.on_demand is not None}
    return [
        c
        for c in older
        if c.on_demand is not None and c.on_demand.usd_per_gpu_hour < now.get(c.gpu, float("inf"))
    ]


def summarize(report: WorkloadReport) -> WorkloadSummary:
    return WorkloadSummary(
        name=report.definition.name,
        description=report.definition.description,
        best=report.best,
        cheapest_overall=report.cheapest_overall,
        offers_ranked=report.rankings_total,
        fitting_gpu_types=len(report.memory.fitting_gpu_types),
        swept=bool(report.memory.rows),
    )


def build_week(
    con: duckdb.DuckDBPyConnection,
    week: IsoWeek,
    *,
    generated_at: dt.datetime,
    catalog: Mapping[str, Any] | None = None,
    warehouse: str | None = None,
) -> tuple[WeekOverview, list[WorkloadReport]]:
    """The overview and one report per workload for ``week`` (all workloads: the index lists them all)."""
    catalog = workload_info.load_catalog() if catalog is None else catalog
    meta = build_meta(con, week, generated_at, warehouse)
    changes, without_baseline = changes_module.week_price_moves(con, week)
    offers = loading.current_offers(con, week)
    # Only current prices (pages at most MAX_PRICE_AGE_DAYS before the as-of date) name a cheapest;
    # older ones are listed apart where they would have been cheaper, with their age.
    fresh, older = loading.split_by_age(offers, meta.as_of)
    cheapest = loading.cheapest_by_gpu(fresh)
    older_cheapest = _older_cheaper(loading.cheapest_by_gpu(older), cheapest)
    # One count of each provider's offers for every section: the current offers the report uses.
    per_provider = Counter(o["provider"] for o in offers)
    freshness = [
        f.model_copy(update={"offers": per_provider.get(f.provider) if f.offers is not None else None})
        for f in loading.freshness(con, week)
    ]
    status, warn = data_status(meta, freshness)
    meta = meta.model_copy(
        update={
            "sources": [
                s.model_copy(update={"offers": per_provider.get(s.provider, 0)}) for s in meta.sources
            ],
            "status": status,
            "status_warn": warn,
        }
    )
    names = workload_order(con, week, catalog)
    fits = loading.memory_fits(con, names)
    no_capacity = comparison.no_capacity(con)  # the same watch list in every workload's report
    reports = [
        build_workload_report(
            con,
            week,
            name,
            catalog.get(name),
            meta=meta,
            changes=changes,
            cheapest=cheapest,
            fit=fits[name],
            no_capacity=no_capacity,
            # Without a catalog (models.workloads absent) nothing can be "no longer in" it.
            in_catalog=name in catalog or not catalog,
        )
        for name in names
    ]
    overview = WeekOverview(
        meta=meta,
        freshness=freshness,
        changes=changes[:TOP_CHANGES],
        changes_total=len(changes),
        offers_without_baseline=without_baseline,
        cheapest=cheapest,
        older_cheapest=older_cheapest,
        unknown_gpu_offers=sum(1 for o in offers if o["gpu"] == "unknown"),
        workloads=[summarize(r) for r in reports],
    )
    return overview, reports
