"""Per-run cost and cost per successful checkpoint (seed-guide.md sections 4-5).

Run cost (the guide's table): ``GPUs x wall hours x $/GPU-hour``.

Cost per successful checkpoint: every term of the guide's budget unit, computed separately::

    gpu          GPUs x compute hours x $/GPU-hour
  + orchestration GPUs x $/GPU-hour x (start-up + model download hours)       billed idle time
  + rework       GPUs x $/GPU-hour x expected extra hours from interruptions   spot, failures
  + storage      $/GB-month x checkpoint GB x retained checkpoints x months the run lasts
  + data         $/GB x dataset GB (ingest or egress)
  + engineer     $/h x (fixed hours + hours per interruption x interruptions)  default $0
  - reusable     value of checkpoints/evals reused elsewhere                   default $0
  = total;  cost_per_checkpoint = total / checkpoints

Checkpoints are marks of training *progress* (every N steps or tokens), so every offer reaches the
same number of them and ranking by cost per checkpoint ranks by risk-adjusted total cost; the
count is ``ceil(training tokens / tokens per checkpoint)``, at least 1 (the final checkpoint).
A workload that checkpoints on the *wall clock* instead (``checkpoint_interval_hours``) produces
``ceil(compute hours / interval)`` checkpoints on each configuration.

Interruptions are Poisson with rate ``(spot preemptions + failures) x nodes`` per hour. A segment
of ``tau`` compute hours between checkpoints with restart time ``R`` takes
``(exp(lambda tau) - 1) (1/lambda + R)`` hours on average (first order: ``tau + lambda tau (tau/2 + R)``,
i.e. each interruption loses half an interval plus the restart).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

HOURS_PER_MONTH = 730.0  # 8,760 h / 12

# Resumable checkpoint bytes per *trainable* parameter: master weights + optimizer state as saved
# by FSDP/DeepSpeed (the bf16 working copy is not saved). Mixed precision keeps an fp32 master.
_MASTER_BYTES = {"fp32": 4.0, "bf16-mixed": 4.0, "bf16-true": 2.0}
_STATE_BYTES = {
    ("adamw", False): 8.0,  # two fp32 moments
    ("adamw", True): 4.0,  # two bf16 moments under bf16-true
    ("adamw8bit", False): 2.0,
    ("adamw8bit", True): 2.0,
    ("paged_adamw8bit", False): 2.0,
    ("paged_adamw8bit", True): 2.0,
    ("paged_adamw", False): 8.0,  # bitsandbytes' 32-bit states are fp32 whatever the param dtype
    ("paged_adamw", True): 8.0,
    ("sgd", False): 4.0,
    ("sgd", True): 2.0,
}
# Adapters are trained in fp32 (PEFT) with AdamW: weights 4 + moments 8 per adapter parameter.
_ADAPTER_BYTES = 12.0


class CostTerms(BaseModel):
    """The configurable terms of the cost per checkpoint. Defaults are documented assumptions;
    a workload overrides any of them (``cost_terms:`` in workloads.yaml)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    storage_usd_per_gb_month: float = Field(
        default=0.10,
        ge=0,
        description="checkpoint storage; between object storage (~$0.02-0.03) and providers' shared "
        "file systems (~$0.07-0.20 per GB-month)",
    )
    checkpoints_retained: int = Field(default=3, ge=1, description="checkpoints kept at once (rolling)")
    data_usd_per_gb: float = Field(
        default=0.05,
        ge=0,
        description="moving the dataset in (cross-cloud egress is typically $0.05-0.09/GB)",
    )
    bytes_per_token: float = Field(
        default=4.0,
        gt=0,
        description="dataset size per training token when dataset_gb is not given (~4 B/token of text)",
    )
    dataset_gb: float | None = Field(
        default=None, ge=0, description="dataset size; default tokens x bytes_per_token"
    )
    startup_hours: float = Field(
        default=0.25, ge=0, description="provisioning, image pull, NCCL init (billed)"
    )
    model_download_gb_per_hour: float = Field(
        default=360.0, gt=0, description="weights download rate (100 MB/s); the model is fetched once per run"
    )
    spot_preemptions_per_node_hour: float = Field(
        default=0.05, ge=0, description="assumed: one preemption per ~20 node-hours of spot capacity"
    )
    failures_per_node_hour: float = Field(
        default=0.00016,
        ge=0,
        description="unexpected interruptions on dedicated capacity: Llama 3 paper, 419 in 54 days on "
        "16,384 H100s (2,048 nodes) = 1.6e-4 per node-hour",
    )
    community_failures_per_node_hour: float = Field(
        default=0.01, ge=0, description="assumed: marketplace hosts without an SLA (Runpod community cloud)"
    )
    restart_hours: float = Field(default=0.25, ge=0, description="re-queue, reload the checkpoint, warm up")
    engineer_usd_per_hour: float = Field(default=0.0, ge=0, description="optional: value of engineering time")
    engineer_hours: float = Field(default=0.0, ge=0, description="fixed engineering hours per run")
    engineer_hours_per_interruption: float = Field(
        default=0.0, ge=0, description="hands-on recovery per interruption"
    )
    reusable_checkpoint_value_usd: float = Field(
        default=0.0, ge=0, description="value of checkpoints/evals reused elsewhere, subtracted"
    )

    def with_overrides(self, overrides: Mapping[str, object] | None) -> CostTerms:
        """These terms with some fields replaced (validated)."""
        if not overrides:
            return self
        return CostTerms.model_validate({**self.model_dump(), **dict(overrides)})


DEFAULT_COST_TERMS = CostTerms()


class CostTermArrays:
    """CostTerms gathered per row (one row per configuration), so configurations of workloads
    with different terms are costed in one vectorised pass."""

    def __init__(self, terms: Sequence[CostTerms], index: np.ndarray) -> None:
        for name in CostTerms.model_fields:
            if name == "dataset_gb":
                continue  # passed to checkpoint_costs explicitly
            values = np.array([getattr(t, name) for t in terms], dtype=float)
            setattr(self, name, values[index])


# ------------------------------------------------------------------- run cost (the guide's table)
class RunCost(BaseModel):
    """``gpuprice estimate``'s answer: hours, GPU-hours and cost of one run."""

    model_config = ConfigDict(frozen=True)

    gpus: int
    hours: float
    gpu_hours: float
    usd_per_gpu_hour: float | None
    cost_usd: float | None


def run_cost(gpus: int, hours: float, usd_per_gpu_hour: float | None) -> RunCost:
    """GPUs x wall hours x $/GPU-hour, rounded to cents (8 x 21 h x $3.07 = $515.76)."""
    if gpus < 1 or not math.isfinite(hours) or hours < 0:
        raise ValueError(f"run_cost needs gpus >= 1 and hours >= 0 (got {gpus}, {hours})")
    gpu_hours = gpus * hours
    cost = None if usd_per_gpu_hour is None else round(gpu_hours * usd_per_gpu_hour + 1e-9, 2)
    return RunCost(
        gpus=gpus, hours=hours, gpu_hours=gpu_hours, usd_per_gpu_hour=usd_per_gpu_hour, cost_usd=cost
    )


def hours_for_tokens(tokens: float, tokens_per_sec_per_gpu: float, gpus: int) -> float:
    """Compute wall hours to train ``tokens`` at a per-GPU rate on ``gpus`` GPUs."""
    if tokens_per_sec_per_gpu <= 0:
        raise ValueError("throughput must be positive")
    return tokens / (tokens_per_sec_per_gpu * gpus * 3600.0)


# ------------------------------------------------------------------- checkpoints
def checkpoint_count(tokens: float | np.ndarray, tokens_per_checkpoint: float | np.ndarray) -> np.ndarray:
    """Progress checkpoints a run writes: ceil(tokens / per checkpoint), at least the final one."""
    ratio = np.asarray(tokens, dtype=float) / np.asarray(tokens_per_checkpoint, dtype=float)
    return np.maximum(1.0, np.ceil(ratio - 1e-9))


def resumable_checkpoint_gb(
    n_params: float, method: str, optimizer: str, precision: str, adapter_params: float = 0.0
) -> float:
    """Size of a checkpoint one can resume from: master weights + optimizer state of what trains.

    Full training, bf16-mixed AdamW: 4 + 8 = 12 B/param (70B: 840 GB). Adapters: only the adapter
    weights and their AdamW state (the frozen base is the public model, not re-saved).
    """
    if method == "full":
        per_param = _MASTER_BYTES[precision] + _STATE_BYTES[(optimizer, precision == "bf16-true")]
        return n_params * per_param / 1e9
    return adapter_params * _ADAPTER_BYTES / 1e9


# ------------------------------------------------------------------- cost per checkpoint
COST_COMPONENTS: tuple[str, ...] = (
    "gpu_usd",
    "orchestration_usd",
    "rework_usd",
    "storage_usd",
    "data_usd",
    "engineer_usd",
    "reusable_value_usd",
)


def _interruption_rate(
    terms: CostTerms | CostTermArrays,
    nodes: np.ndarray,
    spot: np.ndarray,
    community: np.ndarray,
    spot_rate: np.ndarray | None = None,
) -> np.ndarray:
    # A measured per-offer spot rate (AWS's interruption bucket, models/spot_risk.py) replaces
    # the assumed default where it is known (not NaN).
    preemption = terms.spot_preemptions_per_node_hour
    if spot_rate is not None:
        preemption = np.where(np.isnan(spot_rate), preemption, spot_rate)
    per_node = (
        terms.failures_per_node_hour
        + np.where(spot, preemption, 0.0)
        + np.where(community, terms.community_failures_per_node_hour, 0.0)
    )
    return per_node * nodes


def checkpoint_costs(
    *,
    gpus: np.ndarray,
    nodes: np.ndarray,
    usd_per_gpu_hour: np.ndarray,
    compute_hours: np.ndarray,
    checkpoints: np.ndarray,
    spot: np.ndarray,
    community: np.ndarray,
    checkpoint_gb: float | np.ndarray,
    model_gb: float | np.ndarray,
    dataset_gb: float | np.ndarray,
    terms: CostTerms | CostTermArrays = DEFAULT_COST_TERMS,
    spot_rate: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Every cost term for many configurations (arrays broadcast together; ``terms`` may be one
    workload's CostTerms or per-row CostTermArrays).

    Returns the COST_COMPONENTS in USD plus ``total_usd``, ``cost_per_checkpoint_usd``,
    ``expected_interruptions``, ``rework_hours``, ``orchestration_hours`` and ``wall_hours``
    (compute + orchestration + rework: the expected time to the last checkpoint). ``spot_rate``
    (per row, NaN: unknown) is a measured preemption rate per node-hour for spot rows.
    """
    gpus, nodes, price, hours, checkpoints = (
        np.asarray(a, dtype=float) for a in (gpus, nodes, usd_per_gpu_hour, compute_hours, checkpoints)
    )
    spot, community = np.asarray(spot, dtype=bool), np.asarray(community, dtype=bool)
    hourly = gpus * price

    rate = _interruption_rate(terms, nodes, spot, community, spot_rate)
    segment = hours / checkpoints  # compute hours between checkpoints
    # Expected time per segment under Poisson interruptions, exact; expm1 keeps tiny rates accurate.
    with np.errstate(divide="ignore", invalid="ignore"):
        expected_segment = np.where(
            rate > 0,
            np.expm1(rate * segment) * (1.0 / np.where(rate > 0, rate, 1.0) + terms.restart_hours),
            segment,
        )
    rework_hours = np.maximum(0.0, checkpoints * expected_segment - hours)
    interruptions = rate * (hours + rework_hours)

    zeros = np.zeros_like(hours)
    orchestration_hours = zeros + terms.startup_hours + model_gb / terms.model_download_gb_per_hour
    wall_hours = hours + orchestration_hours + rework_hours
    retained = np.minimum(checkpoints, terms.checkpoints_retained)

    parts = {
        "gpu_usd": hourly * hours,
        "orchestration_usd": hourly * orchestration_hours,
        "rework_usd": hourly * rework_hours,
        "storage_usd": terms.storage_usd_per_gb_month
        * checkpoint_gb
        * retained
        * wall_hours
        / HOURS_PER_MONTH,
        "data_usd": zeros + terms.data_usd_per_gb * dataset_gb,
        "engineer_usd": terms.engineer_usd_per_hour
        * (terms.engineer_hours + terms.engineer_hours_per_interruption * interruptions),
        "reusable_value_usd": zeros + terms.reusable_checkpoint_value_usd,
    }
    total = sum(v for k, v in parts.items() if k != "reusable_value_usd") - parts["reusable_value_usd"]
    return {
        **parts,
        "total_usd": total,
        "cost_per_checkpoint_usd": total / checkpoints,
        "expected_interruptions": interruptions,
        "rework_hours": rework_hours,
        "orchestration_hours": orchestration_hours,
        "wall_hours": wall_hours,
    }


class CheckpointCost(BaseModel):
    """Cost per successful checkpoint of one configuration, term by term (USD)."""

    model_config = ConfigDict(frozen=True)

    gpu_usd: float
    orchestration_usd: float
    rework_usd: float
    storage_usd: float
    data_usd: float
    engineer_usd: float
    reusable_value_usd: float
    total_usd: float
    checkpoints: int
    cost_per_checkpoint_usd: float
    expected_interruptions: float
    compute_hours: float
    wall_hours: float


def checkpoint_cost(
    *,
    gpus: int,
    usd_per_gpu_hour: float,
    compute_hours: float,
    checkpoints: int,
    checkpoint_gb: float,
    model_gb: float,
    dataset_gb: float,
    nodes: int = 1,
    spot: bool = False,
    community: bool = False,
    terms: CostTerms = DEFAULT_COST_TERMS,
) -> CheckpointCost:
    """:func:`checkpoint_costs` for one configuration."""
    out = checkpoint_costs(
        gpus=np.array([gpus]),
        nodes=np.array([nodes]),
        usd_per_gpu_hour=np.array([usd_per_gpu_hour]),
        compute_hours=np.array([compute_hours]),
        checkpoints=np.array([checkpoints]),
        spot=np.array([spot]),
        community=np.array([community]),
        checkpoint_gb=checkpoint_gb,
        model_gb=model_gb,
        dataset_gb=dataset_gb,
        terms=terms,
    )
    values = {k: float(v[0]) for k, v in out.items() if k in CheckpointCost.model_fields}
    return CheckpointCost(**values, checkpoints=checkpoints, compute_hours=compute_hours)
