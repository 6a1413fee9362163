"""Workload definitions and memory breakdowns from ``models`` turned into report data.

This module reads ``models.workloads`` and ``models.memory`` through their public functions only
and shows workload fields it has no label for generically, so a new workload field appears in
the report without code changes here.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from gpuprice.errors import BadInput
from gpuprice.models.choices import GPUS_PER_NODE
from gpuprice.models.memory import TrainingSetup, estimate_memory
from gpuprice.models.workloads import Workload, load_workloads
from gpuprice.reports import formatting as fmt
from gpuprice.reports.data import DefinitionItem, RankedOffer, WorkloadDefinition
from gpuprice.reports.memory_verdict import MEMORY_PARTS, MemoryBar, MemoryFitRow, sharding_rank

# Shown first, in this order; any other field follows in the workload's own order.
_LEADING_FIELDS: tuple[str, ...] = (
    "model",
    "params_b",
    "method",
    "optimizer",
    "precision",
    "seq_len",
    "micro_batch",
    "grad_checkpointing",
    "settings_why",
    "lora_rank",
    "lora_targets",
    "training_tokens",
    "tokens",
    "steps",
    "global_batch_tokens",
    "checkpoint_interval_tokens",
    "checkpoint_interval_steps",
    "checkpoint_interval_hours",
    "checkpoints",
    "checkpoint_size_gb",
    "deadline_hours",
    "deadline",
    "min_nodes",
    "max_nodes",
    "max_gpus",
    "budget_usd",
    "tier",
    "providers",
    "mfu",
    "planning_margin",
    "margin",
)
# Cost terms get their own table; where the definition came from is not a property of the job.
_HIDDEN_FIELDS = {"name", "description", "cost_terms", "source"}
_LABELS: dict[str, str] = {
    "params_b": "Parameters (billions)",
    "seq_len": "Sequence length",
    "micro_batch": "Micro-batch",
    "settings_why": "Why these batch and sequence settings",
    "checkpointing": "Checkpoint/restart",
    "long_run_hours": "Interruptible capacity ranked last beyond (hours)",
    "grad_checkpointing": "Activation checkpointing",
    "lora_rank": "LoRA rank",
    "lora_targets": "LoRA targets",
    "training_tokens": "Training tokens",
    "tokens": "Training tokens",
    "global_batch_tokens": "Global batch (tokens)",
    "checkpoint_interval_tokens": "Checkpoint every (tokens)",
    "checkpoint_interval_steps": "Checkpoint every (steps)",
    "checkpoint_interval_hours": "Checkpoint every",
    "checkpoints": "Checkpoints per run",
    "checkpoint_size_gb": "Checkpoint size",
    "deadline_hours": "Deadline",
    "min_nodes": "Nodes (min)",
    "max_nodes": "Nodes (max)",
    "max_gpus": "GPUs (max)",
    "margin": "Planning margin on memory",
    "budget_usd": "Budget",
    "tier": "Tiers considered",
    "providers": "Providers considered",
}
# Numeric fields between 0 and 1 whose names say "share of something": shown as percentages.
_FRACTION_WORDS = ("mfu", "margin", "fraction", "risk", "probability", "share", "efficiency", "utilization")
MAX_BARS = 6


def load_catalog(extra: Path | None = None) -> dict[str, Any]:
    """Workload name -> definition: the built-ins, then ``extra`` (the edge passes GPUPRICE_WORKLOADS)."""
    return {w.name: w for w in load_workloads(extra)}


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _as_dict(obj: Any) -> dict[str, Any]:
    if obj is None:
        return {}
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="python")
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if isinstance(obj, Mapping):
        return dict(obj)
    return {k: v for k, v in vars(obj).items() if not k.startswith("_")}


def _flatten(data: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, Any]]:
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, BaseModel) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
            value = _as_dict(value)
        if isinstance(value, Mapping) and value:
            yield from _flatten(value, path)
        else:
            yield path, value


def format_value(key: str, value: Any) -> str:
    """A definition value for people, guided by the field name (tokens, hours, USD, fractions)."""
    leaf = key.rsplit(".", 1)[-1].lower()
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "token" in leaf:
            return fmt.tokens(value)
        if "usd" in leaf or "cost" in leaf or "price" in leaf:
            return fmt.usd_rate(value) if "hour" in leaf else fmt.usd(value)
        if leaf.endswith("hours") or leaf in ("deadline", "hours"):
            return fmt.duration(value)
        if leaf.endswith("_gb") or leaf == "gb":
            return fmt.gb(value)
        if any(word in leaf for word in _FRACTION_WORDS) and 0 <= value <= 1:
            return fmt.ratio(value)
        if value and abs(value) < 0.01:
            return f"{value:g}"  # learning rates and the like: keep the significant digits
        return fmt.number(value, 0 if float(value).is_integer() else 2)
    if isinstance(value, (list, tuple, set)):
        return ", ".join(format_value(key, v) for v in value) or fmt.MISSING
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if value is None:
        return fmt.MISSING
    return str(getattr(value, "value", value))


def _label(path: str) -> str:
    return " › ".join(_LABELS.get(part, fmt.humanize(part)) for part in path.split("."))


def _definition_data(workload: Any) -> dict[str, Any]:
    """The workload's own JSON-ready definition (derived values included) when it offers one."""
    method = getattr(workload, "definition", None)
    if callable(method):
        try:
            data = method()
        except Exception:  # a definition that cannot derive its extras still has its fields
            data = None
        if isinstance(data, Mapping):
            return dict(data)
    return _as_dict(workload)


def deadline_hours(workload: Any) -> float | None:
    """The wall-clock deadline in hours, whatever the catalog calls it."""
    for name in ("deadline_hours", "max_hours", "deadline"):
        value = _field(workload, name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return float(value)
        if value is not None and not isinstance(value, (str, bool)):
            nested = _field(value, "hours")
            if isinstance(nested, (int, float)) and nested > 0:
                return float(nested)
    return None


def describe(
    name: str,
    workload: Any | None,
    *,
    rankings: Sequence[RankedOffer] = (),
    planning_margin: float | None = None,
    in_catalog: bool = True,
) -> WorkloadDefinition:
    """The workload's definition and assumptions as labelled items.

    Assumptions the model output carries (MFU range, planning margin) are added when the
    catalog does not state them, so a reader sees what the numbers rest on.
    """
    data = _definition_data(workload)
    if "training_tokens" in data and data.get("tokens") == data["training_tokens"]:
        data.pop("tokens")  # the same number twice
    flat = dict(_flatten({k: v for k, v in data.items() if k not in _HIDDEN_FIELDS}))
    ordered = [k for k in _LEADING_FIELDS if k in flat] + [k for k in flat if k not in _LEADING_FIELDS]
    items = [
        DefinitionItem(label=_label(k), value=format_value(k, flat[k]))
        for k in ordered
        if flat[k] not in (None, "", [])
    ]
    keys = {k.rsplit(".", 1)[-1] for k in flat}
    mfus = [offer.mfu for offer in rankings]
    if mfus and "mfu" not in keys:
        low, high = min(mfus), max(mfus)
        span = fmt.ratio(low) if abs(high - low) < 5e-4 else f"{fmt.ratio(low)} to {fmt.ratio(high)}"
        items.append(DefinitionItem(label="MFU assumed (per GPU type)", value=span))
    if planning_margin is not None and not keys & {"margin", "planning_margin"}:
        items.append(DefinitionItem(label="Planning margin on memory", value=fmt.ratio(planning_margin)))
    description = _field(workload, "description")
    return WorkloadDefinition(
        name=name,
        description=str(description) if description else None,
        items=items,
        deadline_hours=deadline_hours(workload) if workload is not None else None,
        in_catalog=in_catalog,
    )


def with_verdicts(
    rows: Sequence[MemoryFitRow], margin: float | None, method: str | None
) -> list[MemoryFitRow]:
    """The sweep's rows with their verdict (fits / tight / does_not_fit at ``margin``,
    models/fit_verdict.py) and the error band of the predicted peak for the workload's method
    (models/memory_band.py: where 90 % of measured runs like it fell)."""
    from gpuprice.models.fit_verdict import judge
    from gpuprice.models.memory_band import band_of

    band = band_of(method) if method else None
    result = []
    for row in rows:
        low_high = band.apply(row.device_gb) if band is not None else None
        verdict = judge(row.device_gb, row.gpu_memory_gb, margin or 0.0, low_high)
        update: dict[str, Any] = {
            "verdict": verdict.verdict,
            "band_crosses_capacity": verdict.band_crosses_capacity,
        }
        if low_high is not None:
            update |= {"band_low_gb": low_high[0], "band_high_gb": low_high[1]}
        result.append(row.model_copy(update=update))
    return result


def band_note(method: str | None) -> str | None:
    """One sentence on the band shown beside each predicted peak."""
    from gpuprice.models.memory_band import band_of

    if not method:
        return None
    band = band_of(method)
    return (
        f"Ranges are the error band of the predicted peak: {band.coverage:.0%} of {band.runs} measured "
        f"{band.key if band.key != 'all' else ''} runs ({band.validation}) fell within "
        f"{band.low:+.0%}/{band.high:+.0%} of the prediction."
    ).replace("  ", " ")


def speed_band_note(method: str | None) -> str | None:
    """One sentence on the hours and cost ranges beside each ranked offer (models/throughput_band.py)."""
    from gpuprice.models.throughput_band import borrowed_widening, speed_band

    if not method:
        return None
    band = speed_band(method)
    return (
        f"Range: the total cost at the ends of the throughput error band: {band.coverage:.0%} of "
        f"{band.runs} measured {band.key} runs ({band.validation.split(':')[0]}) ran within "
        f"{band.low:+.0%}/{band.high:+.0%} of the predicted tokens/s; wider on GPUs whose efficiency "
        f"is borrowed from a measured family (+{borrowed_widening():.0%} each side)."
    )


def planning_margin(rows: Sequence[MemoryFitRow]) -> float | None:
    """The margin the memory-fit sweep applied: the fraction of the card kept free
    (planning_gb = per_gpu_gb / (1 - margin), models/fit_verdict.py)."""
    ratios = [1 - r.per_gpu_gb / r.planning_gb for r in rows if r.planning_gb > 0]
    return round(sum(ratios) / len(ratios), 4) if ratios else None


# ---------------------------------------------------------------------------- memory bars


def bar_setups(rows: Sequence[MemoryFitRow], ranked: Sequence[RankedOffer] = ()) -> list[tuple[int, str]]:
    """The (GPU count, sharding) setups worth a bar, fewest GPUs first.

    The setups of the best-ranked offers, then the simplest fitting setup at each single-node
    count; without any fit, the lowest-memory setup per count shows how far off the workload is.
    """
    chosen: list[tuple[int, str]] = []
    for offer in sorted(ranked, key=lambda o: o.rank)[: MAX_BARS // 2]:
        if (offer.gpu_count, offer.sharding) not in chosen:
            chosen.append((offer.gpu_count, offer.sharding))
    fitting = [r for r in rows if r.fits_on_gpu and r.gpu_count <= GPUS_PER_NODE]
    by_count: dict[int, list[MemoryFitRow]] = {}
    for row in fitting or [r for r in rows if r.gpu_count <= GPUS_PER_NODE and not r.offload]:
        by_count.setdefault(row.gpu_count, []).append(row)
    for count in sorted(by_count):
        options = by_count[count]
        if fitting:
            best = min(options, key=lambda r: (not r.least_complex, sharding_rank(r.sharding)))
        else:
            best = min(options, key=lambda r: r.per_gpu_gb)
        if (count, best.sharding) not in chosen:
            chosen.append((count, best.sharding))
    return sorted(chosen[:MAX_BARS], key=lambda s: (s[0], sharding_rank(s[1]), s[1]))


def setup_label(gpu_count: int, sharding: str) -> str:
    gpus = f"{gpu_count} GPU" + ("s" if gpu_count != 1 else "")
    return gpus if sharding == "none" else f"{gpus} · {sharding}"


def memory_bars(
    workload: Any | None, rows: Sequence[MemoryFitRow], ranked: Sequence[RankedOffer] = ()
) -> tuple[list[MemoryBar], str | None]:
    """Per-GPU breakdown bars for the drawn setups, and a note when only totals are known."""
    bars: list[MemoryBar] = []
    failures: list[str] = []
    for count, sharding in bar_setups(rows, ranked):
        estimate = None
        if workload is not None:
            try:
                estimate = breakdown(workload, count, sharding)
            except Exception as exc:  # the model may reject a setup the sweep stored; fall back to the total
                failures.append(f"{setup_label(count, sharding)}: {exc}")
        if estimate is None:
            stored = [r for r in rows if (r.gpu_count, r.sharding) == (count, sharding)]
            if not stored:
                continue  # a ranked setup the sweep does not hold and the model cannot rebuild
            row = max(stored, key=lambda r: r.per_gpu_gb)
            estimate = ({"total": row.per_gpu_gb}, row.planning_gb)
        parts, planning = estimate
        bars.append(
            MemoryBar(
                label=setup_label(count, sharding),
                gpu_count=count,
                sharding=sharding,
                parts=parts,
                planning_gb=planning,
            )
        )
    note = None
    if bars and any("total" in bar.parts for bar in bars):
        note = (
            "Only the total per-GPU memory is available for some setups (no breakdown from the memory model)."
        )
        if failures:
            note += " " + "; ".join(failures[:3])
    return bars, note


def breakdown(
    workload: Workload, gpu_count: int, sharding: str
) -> tuple[dict[str, float], float | None] | None:
    """The memory model's per-GPU breakdown (GB) and planning size for ``gpu_count`` GPUs.

    Both come from one estimate so a bar's margin matches its stack even if the stored sweep
    was computed by an older model version.
    """
    setup = _memory_setup(workload, gpu_count, sharding)
    if setup is None:
        return None
    estimate = estimate_memory(setup)
    parts = _as_dict(_field(estimate, "breakdown", estimate))
    values = {part: float(parts[part]) for part in MEMORY_PARTS if isinstance(parts.get(part), (int, float))}
    planning = _field(estimate, "planning_gb")
    return (values, float(planning) if isinstance(planning, (int, float)) else None) if values else None


def _memory_setup(workload: Workload, gpu_count: int, sharding: str) -> TrainingSetup | None:
    """The memory model's input for the workload on ``gpu_count`` GPUs with ``sharding``.

    None when the setup is not one the memory model accepts (an unknown stored sharding name).
    """
    try:
        return workload.setup(gpus=gpu_count, sharding=sharding)
    except (BadInput, ValueError):
        return None
