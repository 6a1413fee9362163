"""One workload of the catalog: the training job offers are ranked for, validated (``Workload``).

Read from YAML by :mod:`gpuprice.models.workloads`, built from command-line options by
:mod:`gpuprice.models.workload_jobs`; the model resolves its architecture and derives the job's
tokens, checkpoints and memory setup.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from gpuprice.errors import BadInput
from gpuprice.models.choices import (
    GPUS_PER_NODE,
    ActivationCheckpointing,
    Attention,
    Framework,
    LoraTargets,
    LossKernel,
    MemoryMetric,
    Method,
    Optimizer,
    Precision,
)
from gpuprice.models.cost import CostTerms, resumable_checkpoint_gb
from gpuprice.models.fit_verdict import DEFAULT_MARGIN, MARGIN_MAX, MARGIN_MIN
from gpuprice.quantities import parse_number

DEFAULT_CHECKPOINTS = 10  # no interval given: a checkpoint every tenth of the run
DEFAULT_LORA_RANK = 16
DEFAULT_LORA_TARGETS = "all"


class Workload(BaseModel):
    """One training job: model, recipe, token budget, checkpoint schedule, deadline, cost terms."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=80)
    description: str = ""
    model: str | None = Field(default=None, description="catalog id (Hugging Face repo id)")
    config: str | None = Field(
        default=None, description="a Hugging Face config.json (relative paths: to the workloads file)"
    )
    params_b: float | None = Field(
        default=None, gt=0, le=5000, description="size, when the model is not in the catalog"
    )
    method: Method
    optimizer: Optimizer = "adamw"
    precision: Precision = "bf16-mixed"
    seq_len: int = Field(default=2048, ge=1, le=4_194_304)
    micro_batch: int = Field(default=1, ge=1, le=65_536)
    grad_checkpointing: bool | None = Field(default=None, description="default: on for qlora, off otherwise")
    activation_checkpointing: ActivationCheckpointing | None = Field(
        default=None, description="none, selective or full; grad_checkpointing is the alias of full"
    )
    framework: Framework = "hf"
    compile: bool = False
    loss: LossKernel | None = Field(default=None, description="default: the framework's")
    attention: Attention | None = Field(default=None, description="default: the model's and framework's")
    cpu_offload_activations: bool = False
    optimizer_in_backward: bool = False
    built_before_zero_init: bool = Field(
        default=False, description="DeepSpeed ZeRO-3: the model was built before zero.Init (TrainingSetup)"
    )
    non_reentrant_checkpointing: bool = Field(
        default=False,
        description="hf LoRA/QLoRA under FSDP: checkpointing keeps no recomputed inputs (TrainingSetup)",
    )
    memory_metric: MemoryMetric = "device"
    # Adapter fields belong to lora/qlora only (None for a full fine-tune; default rank 16, all targets).
    lora_rank: int | None = Field(default=None, ge=1, le=65_536)
    lora_targets: LoraTargets | None = None
    margin: float = Field(
        default=DEFAULT_MARGIN, ge=MARGIN_MIN, le=MARGIN_MAX, description="fraction of the card kept free"
    )
    tokens: float | None = Field(default=None, gt=0)
    steps: int | None = Field(default=None, ge=1)
    global_batch_tokens: int | None = Field(default=None, ge=1)
    checkpoint_interval_tokens: float | None = Field(default=None, gt=0)
    checkpoint_interval_steps: int | None = Field(default=None, ge=1)
    checkpoint_interval_hours: float | None = Field(default=None, gt=0)
    checkpoint_size_gb: float | None = Field(default=None, ge=0)
    # Constraints: offers that break one are excluded from the ranking (shown, marked, on request).
    deadline_hours: float | None = Field(default=None, gt=0)
    # The guide's risk rule (seed-guide.md, common mistake 4): a full fine-tune or pretraining run
    # longer than long_run_hours ranks spot and community capacity after reserved/on-demand,
    # unless its checkpoint/restart is proven (checkpointing: proven).
    checkpointing: Literal["proven", "unproven"] = "unproven"
    settings_why: str = Field(default="", description="why these batch and sequence settings (catalog)")
    long_run_hours: float = Field(default=8.0, gt=0, description="length from which the risk rule applies")
    min_nodes: int = Field(default=1, ge=1, le=1024)
    max_nodes: int = Field(default=1, ge=1, le=1024)
    max_gpus: int | None = Field(default=None, ge=1, le=131_072)
    budget_usd: float | None = Field(default=None, gt=0, description="most the whole run may cost")
    # Selections: only offers of these tiers / providers are considered (None: all).
    tier: tuple[Literal["on_demand", "spot", "reserved"], ...] | None = None
    providers: tuple[str, ...] | None = None
    cost_terms: CostTerms = Field(default_factory=CostTerms)
    source: str = Field(default="", exclude=True, description="file the workload came from")

    @field_validator("tokens", "checkpoint_interval_tokens", "global_batch_tokens", mode="before")
    @classmethod
    def _quantity(cls, value: Any, info: ValidationInfo) -> Any:
        """Token counts accept the CLI's spellings: 500M, 2B, 1_000_000, 1e9."""
        if isinstance(value, str):
            try:
                return parse_number(str(info.field_name), value, suffixes=True)
            except BadInput as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("tier", "providers", mode="before")
    @classmethod
    def _list(cls, value: Any) -> Any:
        """A list, or the CLI's comma-separated text ("on_demand,spot")."""
        if isinstance(value, str):
            value = [part for part in value.split(",") if part.strip()]
        if isinstance(value, (list, tuple)):
            return tuple(str(v).strip().lower() for v in value)
        return value

    @field_validator("providers")
    @classmethod
    def _known_providers(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        from gpuprice.scrapers.offer import PROVIDERS

        for name in value or ():
            if name not in PROVIDERS:
                raise ValueError(f"unknown provider {name!r}; valid: {', '.join(PROVIDERS)}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _no_bool_numbers(cls, data: Any) -> Any:
        """Python counts true as 1: a number field never takes YAML's true/false."""
        if isinstance(data, dict):
            for name, value in data.items():
                field = cls.model_fields.get(name)
                if isinstance(value, bool) and field is not None and _numeric(field.annotation):
                    raise ValueError(f"{name} must be a number, not {str(value).lower()}")
        return data

    @field_validator(
        "method",
        "optimizer",
        "precision",
        "lora_targets",
        "activation_checkpointing",
        "framework",
        "loss",
        "memory_metric",
        "attention",
        mode="before",
    )
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _framework_precision(cls, data: Any) -> Any:
        """An unstated precision is the framework's training dtype (bf16-mixed for hf)."""
        if isinstance(data, dict) and data.get("precision") is None:
            from gpuprice.models.frameworks import DEFAULTS

            framework = str(data.get("framework") or "hf").strip().lower()
            if framework in DEFAULTS:
                data = {**data, "precision": DEFAULTS[framework].precision}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        if all(v is None for v in (self.model, self.config, self.params_b)):
            # which one wins when several are given, and whether they agree: resolve_model
            raise ValueError("give the model: model (catalog id), config (config.json) or params_b")
        if self.params_b is not None and (self.model is not None or self.config is not None):
            from gpuprice.errors import BadInput

            try:  # a size beside a model must agree with it (resolve_model's rule)
                _resolve_arch(self.model, self.config, self.params_b)
            except BadInput as error:
                raise ValueError(str(error)) from None
        if (self.tokens is None) == (self.steps is None):
            raise ValueError("give the training length as tokens, or as steps with global_batch_tokens")
        if self.steps is not None and self.global_batch_tokens is None:
            raise ValueError("steps needs global_batch_tokens")
        intervals = [
            self.checkpoint_interval_tokens,
            self.checkpoint_interval_steps,
            self.checkpoint_interval_hours,
        ]
        if sum(v is not None for v in intervals) > 1:
            raise ValueError(
                "give at most one of checkpoint_interval_tokens, checkpoint_interval_steps or checkpoint_interval_hours"
            )
        if self.checkpoint_interval_steps is not None and self.global_batch_tokens is None:
            raise ValueError("checkpoint_interval_steps needs global_batch_tokens")
        if (
            self.grad_checkpointing is not None
            and self.activation_checkpointing is not None
            and self.grad_checkpointing != (self.activation_checkpointing == "full")
        ):
            raise ValueError(
                "grad_checkpointing contradicts activation_checkpointing (the alias of full); give one"
            )
        if self.min_nodes > self.max_nodes:
            raise ValueError(f"min_nodes {self.min_nodes} exceeds max_nodes {self.max_nodes}")
        return self

    @model_validator(mode="before")
    @classmethod
    def _adapter_fields_for_adapters(cls, data: Any) -> Any:
        """lora_rank/lora_targets mean nothing to a full fine-tune (fit accepts and ignores them too)."""
        if isinstance(data, dict) and str(data.get("method", "")).strip().lower() == "full":
            return {k: v for k, v in data.items() if k not in ("lora_rank", "lora_targets")}
        return data

    # ----- derived quantities ---------------------------------------------------------------
    @property
    def training_tokens(self) -> float:
        if self.tokens is not None:
            return float(self.tokens)
        assert self.steps is not None and self.global_batch_tokens is not None
        return float(self.steps) * float(self.global_batch_tokens)

    @property
    def tokens_per_checkpoint(self) -> float | None:
        """Progress between checkpoints; None when the job checkpoints on the wall clock."""
        if self.checkpoint_interval_tokens is not None:
            return float(self.checkpoint_interval_tokens)
        if self.checkpoint_interval_steps is not None:
            assert self.global_batch_tokens is not None
            return float(self.checkpoint_interval_steps) * float(self.global_batch_tokens)
        if self.checkpoint_interval_hours is None:
            return self.training_tokens / DEFAULT_CHECKPOINTS
        return None

    @property
    def adapter_rank(self) -> int:
        return self.lora_rank if self.lora_rank is not None else DEFAULT_LORA_RANK

    @property
    def adapter_targets(self) -> str:
        return self.lora_targets if self.lora_targets is not None else DEFAULT_LORA_TARGETS

    @property
    def gpu_limit(self) -> int | None:
        """The most GPUs the job may use: max_gpus, or max_nodes whole nodes when stricter."""
        by_nodes = self.max_nodes * GPUS_PER_NODE
        return by_nodes if self.max_gpus is None else min(self.max_gpus, by_nodes)

    @property
    def uses_checkpointing(self) -> bool:
        """Full recomputation (what grad_checkpointing names)."""
        return self.checkpointing_mode == "full"

    @property
    def checkpointing_mode(self) -> str:
        if self.activation_checkpointing is not None:
            return self.activation_checkpointing
        if self.grad_checkpointing is not None:
            return "full" if self.grad_checkpointing else "none"
        return "full" if self.method == "qlora" else "none"

    @property
    def gpus_allowed(self) -> tuple[int, int]:
        """GPU counts a multi-node configuration may use (whole 8-GPU nodes)."""
        return self.min_nodes * GPUS_PER_NODE, self.max_nodes * GPUS_PER_NODE

    def arch(self) -> Any:
        """The model's architecture (``models.architectures.ModelArch``)."""
        return _resolve_arch(self.model, self.config, self.params_b)

    def setup(self, gpus: int = 1, sharding: str = "none") -> Any:
        """The memory model's ``TrainingSetup`` for this workload on ``gpus`` GPUs."""
        from gpuprice.models.memory import TrainingSetup

        return TrainingSetup.checked(
            arch=self.arch(),
            method=self.method,
            optimizer=self.optimizer,
            precision=self.precision,
            seq_len=self.seq_len,
            micro_batch=self.micro_batch,
            activation_checkpointing=self.checkpointing_mode,
            framework=self.framework,
            compile=self.compile,
            loss=self.loss,
            attention=self.attention,
            cpu_offload_activations=self.cpu_offload_activations,
            optimizer_in_backward=self.optimizer_in_backward,
            built_before_zero_init=self.built_before_zero_init,
            reentrant_checkpointing=not self.non_reentrant_checkpointing,
            memory_metric=self.memory_metric,
            lora_rank=self.adapter_rank,
            lora_targets=self.adapter_targets,
            gpus=gpus,
            sharding=sharding,
            margin=self.margin,
        )

    def adapter_params(self) -> float:
        if self.method == "full":
            return 0.0
        from gpuprice.models.memory import lora_params

        return float(lora_params(self.arch(), self.adapter_rank, self.adapter_targets))

    def checkpoint_gb(self) -> float:
        """Given size, or master weights + optimizer state of what trains (models.cost)."""
        if self.checkpoint_size_gb is not None:
            return self.checkpoint_size_gb
        arch = self.arch()
        return resumable_checkpoint_gb(
            arch.n_params, self.method, self.optimizer, self.precision, self.adapter_params()
        )

    def model_download_gb(self) -> float:
        """The base weights fetched at start-up (BF16)."""
        return 2.0 * self.arch().n_params / 1e9

    def dataset_gb(self) -> float:
        terms = self.cost_terms
        if terms.dataset_gb is not None:
            return terms.dataset_gb
        return self.training_tokens * terms.bytes_per_token / 1e9

    def definition(self) -> dict[str, Any]:
        """JSON-ready definition (what ``gpuprice workloads --json`` prints), derived values included."""
        data = self.model_dump(mode="json", exclude_none=True)
        data["cost_terms"] = self.cost_terms.model_dump(mode="json", exclude_none=True)
        data["grad_checkpointing"] = self.uses_checkpointing
        if self.method != "full":
            data["lora_rank"], data["lora_targets"] = self.adapter_rank, self.adapter_targets
        if self.tier is not None:
            data["tier"] = list(self.tier)
        if self.providers is not None:
            data["providers"] = list(self.providers)
        data["activation_checkpointing"] = self.checkpointing_mode
        data["training_tokens"] = self.training_tokens
        data["checkpoint_size_gb"] = round(self.checkpoint_gb(), 3)
        per_ckpt = self.tokens_per_checkpoint
        if per_ckpt is not None:
            data["checkpoints"] = max(1, math.ceil(self.training_tokens / per_ckpt - 1e-9))
        data["source"] = self.source
        return data


@functools.cache
def _resolve_arch(model: str | None, config: str | None, params_b: float | None) -> Any:
    from gpuprice.models.architectures import resolve_model

    return resolve_model(model_id=model, config_path=config, params_b=params_b)


def _numeric(annotation: Any) -> bool:
    """Whether a field's type admits int or float (and not bool)."""
    import typing

    args = typing.get_args(annotation)
    if args:
        return any(_numeric(a) for a in args)
    return annotation in (int, float)
