"""The ``warnings`` of each ranked row: short stable code, colon, one sentence.

Exists so that every warning the ranking can give is written in one place: the configuration's
(tight fit, no ECC, PCIe, spot on a long run, whole node, deadline), the price's (stale provider,
stale price) and the limits a shown-anyway offer breaks. Each text is built once per situation or
per (provider, price date) and copied to the rows that share it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np

from gpuprice.models.choices import GPUS_PER_NODE
from gpuprice.models.ranking.configurations import Configs
from gpuprice.models.ranking.distinct import distinct_pairs
from gpuprice.models.ranking.offers import Offers
from gpuprice.models.ranking.priced import PricedPairs
from gpuprice.models.ranking.situations import Situations
from gpuprice.models.ranking.workload_table import WorkloadTable
from gpuprice.models.workloads import Workload
from gpuprice.warehouse.staleness import STALE_AFTER_DAYS, age_days

LONG_JOB_HOURS = 24.0  # "long job" for the no-ECC warning


@dataclass(frozen=True)
class Run:
    """One situation of one workload: the facts its configuration warnings are about."""

    workload: Workload
    gpu: str
    gpus: int
    nodes: int
    offer_gpu_count: int
    wall_hours: float
    checkpoint_every: float  # compute hours between checkpoints
    spot: bool = False
    community: bool = False
    rework_hours: float = 0.0
    interruptions: float = 0.0


def _spot_long_run(run: Run) -> str:
    w = run.workload
    capacity = "spot" if run.spot else "community capacity"
    ranked = (
        f"ranked after reserved/on-demand offers: the run is longer than {w.long_run_hours:g} h "
        "and checkpointing is not proven (checkpointing: proven lifts this)"
        if w.checkpointing != "proven"
        else "checkpointing declared proven"
    )
    return (
        f"spot-long-run: a {run.wall_hours:.0f} h full fine-tune on {capacity} expects {run.interruptions:.1f} "
        f"interruptions ({w.cost_terms.spot_preemptions_per_node_hour:g} per node-hour) and "
        f"{run.rework_hours:.1f} h of rework with a checkpoint every {run.checkpoint_every:.1f} h; {ranked}"
    )


def config_warnings(
    run: Run, *, ecc: bool, pcie: bool, comm_share: float, one_gpu_fits: bool, tight: str | None = None
) -> list[str]:
    """Warnings of one configuration and tier."""
    w, gpu, wall = run.workload, run.gpu, run.wall_hours
    out: list[str] = [tight] if tight else []
    if not ecc and wall >= LONG_JOB_HOURS:
        out.append(
            f"no-ecc: {gpu} has no ECC memory; a {wall:.0f} h job risks silent errors and has no support"
        )
    if w.method == "full" and pcie:
        out.append(
            f"pcie-multi-gpu: {run.gpus}x {gpu} exchange gradients over PCIe only; "
            f"{comm_share:.0%} of step time is communication in full fine-tuning"
        )
    if (run.spot or run.community) and w.method == "full" and wall > w.long_run_hours:
        out.append(_spot_long_run(run))
    if run.offer_gpu_count >= GPUS_PER_NODE and run.nodes == 1 and one_gpu_fits:
        out.append(f"whole-node: renting {run.offer_gpu_count} GPUs although one {gpu} fits this workload")
    if w.deadline_hours is not None and wall > w.deadline_hours:
        out.append(f"deadline-missed: {wall:.0f} h expected against a {w.deadline_hours:g} h deadline")
    return out


def tight_warning(workload: Workload, configs: Configs, c: int) -> str | None:
    """``tight-fit: ...`` when the predicted peak fits the card but the planning margin does not."""
    from gpuprice.models.fit_verdict import judge

    capacity = float(configs.gpu_memory_gb[c])
    verdict = judge(capacity - float(configs.headroom_gb[c]), capacity, workload.margin)
    return verdict.warning()


def staleness_warnings(
    provider: str, price_date: dt.date | None, day: dt.date, stale: frozenset[str], max_age_days: int
) -> list[str]:
    out: list[str] = []
    if provider in stale:
        out.append(
            f"stale-provider: {provider}'s latest scrape failed or is more than {STALE_AFTER_DAYS} days old"
        )
    age = age_days(price_date, day)
    if price_date is not None and age is not None and age > max_age_days:
        out.append(
            f"stale-price: price observed on {price_date.isoformat()}, {age} days before {day.isoformat()}"
            f" (older than the {max_age_days}-day limit: not current)"
        )
    return out


def constraint_warnings(
    workload: Workload, codes: list[str], gpus: int, nodes: int, total: float
) -> list[str]:
    """Warnings of the limits a shown-anyway (``include_infeasible``) offer breaks; the deadline's
    is among the configuration warnings already."""
    out = []
    if "max_gpus" in codes:
        out.append(f"over-gpu-limit: {gpus} GPUs exceed the job's limit of {workload.max_gpus}")
    if "max_nodes" in codes:
        out.append(f"over-node-limit: {nodes} nodes exceed the job's limit of {workload.max_nodes}")
    if "budget" in codes:
        out.append(f"over-budget: ${total:,.2f} in total exceeds the ${workload.budget_usd:,.2f} budget")
    return out


def _ecc(gpu: str) -> bool:
    from gpuprice.models.catalog import get_gpu

    return get_gpu(gpu).ecc


def situation_warnings(
    ranked: PricedPairs,
    situations: Situations,
    cards: list[tuple[str, float]],
    configs: Configs,
    workloads: WorkloadTable,
) -> list[list[str]]:
    """The configuration warnings of each situation, from its first row."""
    rows = situations.first_row
    every = (ranked.hours / ranked.checkpoints)[rows].tolist()
    costs = {
        name: ranked.costs[name][rows].tolist()
        for name in ("wall_hours", "rework_hours", "expected_interruptions")
    }
    out = []
    for i, (c, w, gpus, nodes, spot, community) in enumerate(
        zip(
            *(
                a[rows].tolist()
                for a in (
                    ranked.config,
                    ranked.workload,
                    ranked.gpus,
                    ranked.nodes,
                    ranked.spot,
                    ranked.community,
                )
            ),
            strict=True,
        )
    ):
        workload, gpu = workloads.items[w], cards[int(configs.card[c])][0]
        run = Run(
            workload=workload,
            gpu=gpu,
            gpus=int(gpus),
            nodes=int(nodes),
            offer_gpu_count=int(configs.offer_gpu_count[c]),
            wall_hours=costs["wall_hours"][i],
            checkpoint_every=every[i],
            spot=bool(spot),
            community=bool(community),
            rework_hours=costs["rework_hours"][i],
            interruptions=costs["expected_interruptions"][i],
        )
        out.append(
            config_warnings(
                run,
                ecc=_ecc(gpu),
                pcie=bool(configs.pcie_collectives[c]),
                comm_share=float(configs.communication_share[c]),
                one_gpu_fits=bool(configs.one_gpu_fits[c]),
                tight=tight_warning(workload, configs, c),
            )
        )
    return out


def row_warnings(
    ranked: PricedPairs,
    situations: Situations,
    offers: Offers,
    configs: Configs,
    workloads: WorkloadTable,
    excluded: list[list[str]],
    *,
    day: dt.date,
    stale: frozenset[str],
    max_age_days: int,
) -> list[list[str]]:
    """Each row's warnings: its situation's, its price's, then the limits it breaks (a list per row)."""
    by_situation = situation_warnings(ranked, situations, offers.cards, configs, workloads)
    by_price = [staleness_warnings(p, d, day, stale, max_age_days) for p, d in offers.provider_dates]
    # One list per distinct (situation, provider and price date) pair, copied per row.
    pair, situation, price = distinct_pairs(situations.of_row, offers.provider_date[ranked.offer])
    lists = [by_situation[s] + by_price[p] for s, p in zip(situation.tolist(), price.tolist(), strict=True)]
    warnings = [list(lists[p]) for p in pair.tolist()]
    for i in np.flatnonzero(ranked.broken.any(axis=1)).tolist():
        warnings[i] += constraint_warnings(
            workloads.items[int(ranked.workload[i])],
            excluded[i],
            int(ranked.gpus[i]),
            int(ranked.nodes[i]),
            float(ranked.costs["total_usd"][i]),
        )
    return warnings
