"""The workloads being ranked, as parallel arrays.

Exists so that per-workload facts (tokens, checkpoint rule, limits, cost-term overrides, download
sizes) are read from the Workload objects once and then indexed by workload position, and so that
the cost model is called the same way wherever the ranking prices a configuration.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuprice.models.cost import CostTermArrays, checkpoint_costs
from gpuprice.models.throughput import ModelShape
from gpuprice.models.workloads import Workload


def _checkpoint_count(w: Workload) -> float:
    if w.tokens_per_checkpoint is None:
        return np.nan
    return max(1, math.ceil(w.training_tokens / w.tokens_per_checkpoint - 1e-9))


def _overrides_json(w: Workload) -> str:
    overrides = w.cost_terms.model_dump(mode="json", exclude_defaults=True)
    return json.dumps(overrides, separators=(",", ":"), sort_keys=True)


@dataclass(frozen=True)
class WorkloadTable:
    """The workloads as parallel arrays (index = position in the list given to rank_offers)."""

    items: Sequence[Workload]
    shapes: list[ModelShape]
    tokens: np.ndarray
    checkpoint_count: np.ndarray  # progress checkpoints; NaN for wall-clock checkpointing
    checkpoint_hours: np.ndarray  # wall-clock interval; NaN for progress checkpointing
    deadline: np.ndarray  # NaN when there is none
    min_nodes: np.ndarray
    max_nodes: np.ndarray
    max_gpus: np.ndarray  # inf when there is no limit
    gpu_limit: np.ndarray  # max_gpus or max_nodes whole nodes, the stricter
    budget: np.ndarray  # NaN when there is none
    full: np.ndarray
    risk_rule: np.ndarray  # full fine-tune / pretraining without proven checkpointing
    long_hours: np.ndarray  # the workload's long_run_hours
    checkpoint_gb: np.ndarray
    model_gb: np.ndarray
    dataset_gb: np.ndarray
    assumptions_json: list[str]  # only the cost terms a workload overrides (defaults: models.cost.CostTerms)

    def __len__(self) -> int:
        return len(self.items)

    @classmethod
    def of(cls, workloads: Sequence[Workload]) -> WorkloadTable:
        def per(fn: Callable[[Workload], Any], dtype: Any = float) -> np.ndarray:
            return np.array([fn(w) for w in workloads], dtype=dtype)

        return cls(
            items=workloads,
            shapes=[ModelShape.of(w.arch()) for w in workloads],
            tokens=per(lambda w: w.training_tokens),
            checkpoint_count=per(_checkpoint_count),
            checkpoint_hours=per(lambda w: w.checkpoint_interval_hours or np.nan),
            deadline=per(lambda w: w.deadline_hours if w.deadline_hours is not None else np.nan),
            min_nodes=per(lambda w: w.min_nodes, np.int64),
            max_nodes=per(lambda w: w.max_nodes, np.int64),
            max_gpus=per(lambda w: w.max_gpus if w.max_gpus is not None else np.inf),
            gpu_limit=per(lambda w: w.gpu_limit),
            budget=per(lambda w: w.budget_usd if w.budget_usd is not None else np.nan),
            full=per(lambda w: w.method == "full", bool),
            risk_rule=per(lambda w: w.method == "full" and w.checkpointing != "proven", bool),
            long_hours=per(lambda w: w.long_run_hours),
            checkpoint_gb=per(lambda w: w.checkpoint_gb()),
            model_gb=per(lambda w: w.model_download_gb()),
            dataset_gb=per(lambda w: w.dataset_gb()),
            assumptions_json=[_overrides_json(w) for w in workloads],
        )

    def checkpoints(self, workload: np.ndarray, hours: np.ndarray) -> np.ndarray:
        """Checkpoints per configuration: the progress count, or one per wall-clock interval."""
        by_clock = np.maximum(1.0, np.ceil(hours / self.checkpoint_hours[workload] - 1e-9))
        progress = self.checkpoint_count[workload]
        return np.where(np.isnan(progress), by_clock, progress)

    def costs(
        self,
        workload: np.ndarray,
        *,
        gpus: np.ndarray,
        nodes: np.ndarray,
        price: np.ndarray,
        hours: np.ndarray,
        spot: np.ndarray,
        community: np.ndarray,
        spot_rate: np.ndarray | None = None,
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(checkpoints, every cost term) for configurations of the workloads at ``workload``."""
        checkpoints = self.checkpoints(workload, hours)
        return checkpoints, checkpoint_costs(
            gpus=gpus,
            nodes=nodes,
            usd_per_gpu_hour=price,
            compute_hours=hours,
            checkpoints=checkpoints,
            spot=spot,
            community=community,
            checkpoint_gb=self.checkpoint_gb[workload],
            model_gb=self.model_gb[workload],
            dataset_gb=self.dataset_gb[workload],
            terms=CostTermArrays([w.cost_terms for w in self.items], workload),
            spot_rate=spot_rate,
        )
