"""Cost terms for readers: the assumptions a workload's ranking rests on, and the best offer's
cost per successful checkpoint term by term (from the ranking's ``cost_terms`` JSON)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from gpuprice.reports import formatting as fmt
from gpuprice.reports.data import CostAssumption, DefinitionItem, RankedOffer
from gpuprice.reports.workload_info import format_value

# Known keys of the ranking's cost_terms JSON (models/ranking/cost_terms.py), in reading order.
_AMOUNTS: tuple[tuple[str, str], ...] = (
    ("gpu_usd", "GPU time (compute hours)"),
    ("orchestration_usd", "Start-up and model download (billed)"),
    ("rework_usd", "Rework after interruptions"),
    ("storage_usd", "Checkpoint storage"),
    ("data_usd", "Dataset ingest / egress"),
    ("engineer_usd", "Engineering time"),
    ("reusable_value_usd", "Reusable checkpoints and evals (subtracted)"),
    ("total_usd", "Total to the last checkpoint"),
)
_FACTS: tuple[tuple[str, str], ...] = (
    ("checkpoints", "Checkpoints per run"),
    ("compute_hours", "Compute hours"),
    ("orchestration_hours", "Start-up hours"),
    ("rework_hours", "Expected rework hours"),
    ("wall_hours", "Expected wall hours"),
    ("expected_interruptions", "Expected interruptions"),
    ("checkpoint_gb", "Checkpoint size"),
    ("dataset_gb", "Dataset size"),
    ("model_download_gb", "Model download"),
)
_SKIPPED = {"assumptions"}


def _value(key: str, value: Any) -> str:
    if key.endswith("_hours") and isinstance(value, (int, float)):
        return fmt.hours(value)
    if key == "expected_interruptions" and isinstance(value, (int, float)):
        return f"{value:.2g}"
    return format_value(key, value)


def _flatten_items(terms: Mapping[str, Any], prefix: str = "") -> list[DefinitionItem]:
    items = []
    for key, value in terms.items():
        label = f"{prefix}{fmt.humanize(str(key))}"
        if isinstance(value, Mapping):
            items.extend(_flatten_items(value, prefix=f"{label} › "))
        else:
            items.append(DefinitionItem(label=label, value=_value(str(key), value)))
    return items


def best_offer_costs(offer: RankedOffer | None) -> list[DefinitionItem]:
    """The best offer's cost per checkpoint, term by term (known terms first, then any others)."""
    if offer is None or not offer.cost_terms:
        return []
    terms = offer.cost_terms
    items = [
        DefinitionItem(label=label, value=fmt.usd(terms[key])) for key, label in _AMOUNTS if key in terms
    ]
    if items:
        items.append(
            DefinitionItem(
                label="Cost per successful checkpoint", value=fmt.usd(offer.cost_per_checkpoint_usd)
            )
        )
    items += [
        DefinitionItem(label=label, value=_value(key, terms[key])) for key, label in _FACTS if key in terms
    ]
    known = {k for k, _ in _AMOUNTS} | {k for k, _ in _FACTS} | _SKIPPED
    items += _flatten_items({k: v for k, v in terms.items() if k not in known})
    return items


def assumptions(workload: Any | None, offer: RankedOffer | None) -> list[CostAssumption]:
    """The cost model's assumptions for this workload, overrides marked.

    From the workload's own ``cost_terms`` model (every term, with its documented meaning) when
    the catalog has the workload; otherwise the overrides the ranking recorded.
    """
    terms = getattr(workload, "cost_terms", None)
    if isinstance(terms, BaseModel):
        result = []
        for name, field in type(terms).model_fields.items():
            value = getattr(terms, name)
            if value is None:
                continue
            result.append(
                CostAssumption(
                    label=fmt.humanize(name),
                    value=format_value(name, value),
                    note=field.description,
                    overridden=value != field.get_default(call_default_factory=True),
                )
            )
        return result
    recorded = (offer.cost_terms.get("assumptions") if offer else None) or {}
    if not isinstance(recorded, Mapping):
        return []
    return [
        CostAssumption(label=fmt.humanize(str(k)), value=format_value(str(k), v), overridden=True)
        for k, v in recorded.items()
    ]
