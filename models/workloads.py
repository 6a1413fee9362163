"""The workload catalog: training jobs that offers are ranked for (``models/workloads.yaml``).

Users extend or override it with their own YAML file named by ``GPUPRICE_WORKLOADS`` (read by
gpuprice.settings and passed in as ``extra``; same format;
a workload with the same name replaces the built-in one). Any problem in a file is one BadInput
line naming the file, the line and the field (YAML marks + pydantic locations).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from gpuprice.bounded_load import load_yaml
from gpuprice.errors import BadInput, read_text_input, unknown_choice
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

BUILTIN_PATH = Path(__file__).with_name("workloads.yaml")
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
        if sum(v is not None for v in (self.model, self.config, self.params_b)) != 1:
            raise ValueError("give exactly one of model (catalog id), config (config.json) or params_b")
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


# ----------------------------------------------------------------------------- ad-hoc jobs
# Fields a job gives besides the model options of `fit` (`gpuprice rank` JOB options: the same
# names with `-` for `_`, the same values as in workloads.yaml).
JOB_FIELDS: tuple[str, ...] = (
    "tokens",
    "checkpoint_interval_tokens",
    "checkpoint_interval_hours",
    "deadline_hours",
    "max_gpus",
    "max_nodes",
    "budget_usd",
    "tier",
    "providers",
)
# The limits and selections, which may also tighten a catalog workload from the command line.
LIMIT_FIELDS: tuple[str, ...] = ("deadline_hours", "max_gpus", "max_nodes", "budget_usd", "tier", "providers")


def _flag(field: str) -> str:
    return "--" + field.replace("_", "-")


def _as_bad_input(exc: ValidationError) -> BadInput:
    err = exc.errors()[0]
    loc = tuple(err.get("loc", ()))
    message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if not loc:
        return BadInput(message)
    value = err.get("input")
    shown = f" {value!r}" if isinstance(value, (str, int, float)) and not isinstance(value, bool) else ""
    return BadInput(f"{_flag(str(loc[0]))}{shown}: {message}")


def job_name(model: str | None, config: str | None, params_b: float | str | None, method: str) -> str:
    """A workload name for an ad-hoc job: "qwen2.5-7b-lora", "8b-full"."""
    if model is not None:
        stem = model.rsplit("/", 1)[-1]
    elif config is not None:
        path = Path(config)  # .../Llama-3.1-8B/config.json names the folder; mymodel.json the file
        stem = (path.parent.name if path.stem == "config" else path.stem) or "config"
    else:
        stem = f"{float(params_b or 0):g}b"
    slug = re.sub(r"[^a-z0-9._-]+", "-", f"{stem}-{method}".lower()).strip("-._")
    return (slug or "job")[:80]


def job_workload(fields: Mapping[str, Any]) -> Workload:
    """A workload from command-line values (text or parsed; ``None`` = not given), validated by
    the same rules as workloads.yaml; errors name the option (``--tokens 'x': ...``)."""
    given = {k: (str(v) if isinstance(v, Path) else v) for k, v in fields.items() if v is not None}
    if "tokens" not in given:
        raise BadInput("--tokens is required for a job (training tokens, e.g. 500M or 2B)")
    unknown = sorted(set(given) - set(Workload.model_fields))
    if unknown:
        raise BadInput(f"{_flag(unknown[0])} is not a field of a job yet (rank cannot use it)")
    if "method" in given and "name" not in given:
        given["name"] = job_name(
            given.get("model"), given.get("config"), given.get("params_b"), str(given["method"])
        )
    try:
        workload = Workload.model_validate({**given, "source": "command line"})
    except ValidationError as exc:
        raise _as_bad_input(exc) from None
    workload.arch()
    return workload


def with_limits(workload: Workload, limits: Mapping[str, Any]) -> Workload:
    """``workload`` with the LIMIT_FIELDS given in ``limits`` replaced (validated)."""
    given = {k: v for k, v in limits.items() if v is not None}
    unknown = set(given) - set(LIMIT_FIELDS)
    if unknown:
        raise BadInput(
            f"{_flag(sorted(unknown)[0])} cannot change a workload; valid: {', '.join(map(_flag, LIMIT_FIELDS))}"
        )
    if not given:
        return workload
    try:
        return Workload.model_validate({**workload.model_dump(), **given, "source": workload.source})
    except ValidationError as exc:
        raise _as_bad_input(exc) from None


@functools.cache
def _resolve_arch(model: str | None, config: str | None, params_b: float | None) -> Any:
    from gpuprice.models.architectures import resolve_model

    return resolve_model(model_id=model, config_path=config, params_b=params_b)


# ----------------------------------------------------------------------------- YAML loading
def _yaml_error(path: Path, exc: yaml.YAMLError) -> BadInput:
    # The context mark is where the broken construct starts (an unclosed bracket), the problem
    # mark where the parser gave up; name the first and mention the second.
    context = getattr(exc, "context_mark", None)
    problem_mark = getattr(exc, "problem_mark", None)
    mark = context or problem_mark
    where = f"{path} line {mark.line + 1}" if mark is not None else str(path)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if context is not None and problem_mark is not None and problem_mark.line != context.line:
        problem = f"{problem} at line {problem_mark.line + 1}"
    return BadInput(f"{where}: malformed YAML ({problem})")


def _node_at(node: yaml.Node, loc: tuple[Any, ...]) -> yaml.Node:
    """The YAML node a pydantic error location points at (a scalar field: its key's line)."""
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == key), None)
            if pair is None:
                break
            key_node, value_node = pair
            if not isinstance(value_node, (yaml.MappingNode, yaml.SequenceNode)):
                return key_node
            node = value_node
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            break
    return node


def _items(path: Path, text: str) -> list[tuple[dict[str, Any], yaml.Node]]:
    """The workload mappings of one file with their YAML nodes."""
    try:
        data, root = load_yaml(text)
    except yaml.YAMLError as exc:
        raise _yaml_error(path, exc) from None
    except ValueError as exc:
        raise BadInput(f"{path}: {exc}") from None
    if root is None:
        raise BadInput(f"{path}: empty workloads file (expected 'workloads:' followed by a list)")
    if isinstance(data, dict) and isinstance(root, yaml.MappingNode):
        if set(data) != {"workloads"}:
            extra = next(k for k in root.value if k[0].value != "workloads")[0]
            raise BadInput(
                f"{path} line {extra.start_mark.line + 1}: unknown top-level key {extra.value!r}; expected 'workloads'"
            )
        data = data["workloads"]
        root = next(v for k, v in root.value if k.value == "workloads")
    if not isinstance(data, list) or not isinstance(root, yaml.SequenceNode):
        raise BadInput(f"{path} line {root.start_mark.line + 1}: 'workloads' must be a list of workloads")
    items = []
    for entry, node in zip(data, root.value, strict=True):
        if not isinstance(entry, dict):
            raise BadInput(
                f"{path} line {node.start_mark.line + 1}: each workload must be a mapping of fields"
            )
        items.append((entry, node))
    return items


def _validation_error(path: Path, node: yaml.Node, entry: dict[str, Any], exc: ValidationError) -> BadInput:
    err = exc.errors()[0]
    loc = tuple(err.get("loc", ()))
    target = _node_at(node, loc)
    field = ".".join(str(p) for p in loc) or "workload"
    name = entry.get("name", "?")
    message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    value = err.get("input")
    shown = "" if isinstance(value, (dict, list)) or value is None or not loc else f" (got {value!r})"
    return BadInput(
        f"{path} line {target.start_mark.line + 1}: workload {name!r} field {field}: {message}{shown}"
    )


def load_file(path: str | Path) -> list[Workload]:
    """Workloads of one YAML file, validated (model names resolved), in file order."""
    path = Path(path)
    return list(_parsed_file(path, read_text_input(path, "workloads")))


@functools.lru_cache(maxsize=8)
def _parsed_file(path: Path, text: str) -> tuple[Workload, ...]:
    """The workloads of ``text`` (read from ``path``), parsed once per process for the same text.

    A daily run loads the catalog in several steps (the memory-fit sweep, the rankings, the
    reports): parsing and validating the YAML took ~30 ms each time. Keyed by the text itself,
    so an edited file is parsed again; workloads are frozen, so sharing them is safe."""
    workloads: list[Workload] = []
    seen: dict[str, int] = {}
    for entry, node in _items(path, text):
        line = node.start_mark.line + 1
        try:
            fields = {**entry, "source": str(path)}
            if isinstance(entry.get("config"), str):
                config = Path(entry["config"]).expanduser()
                fields["config"] = str(config if config.is_absolute() else path.parent / config)
            workload = Workload.model_validate(fields)
        except ValidationError as exc:
            raise _validation_error(path, node, entry, exc) from None
        if workload.name in seen:
            raise BadInput(
                f"{path} line {line}: workload {workload.name!r} defined twice (first at line {seen[workload.name]})"
            )
        seen[workload.name] = line
        try:
            workload.arch()
        except BadInput as exc:
            given = "model" if workload.model else "config" if workload.config else "params_b"
            field_line = _node_at(node, (given,)).start_mark.line + 1
            raise BadInput(
                f"{path} line {field_line}: workload {workload.name!r} field model: {exc}"
            ) from None
        workloads.append(workload)
    return tuple(workloads)


def load_workloads(extra: str | Path | None = None) -> list[Workload]:
    """Built-in workloads, then those of ``extra`` (the edge passes $GPUPRICE_WORKLOADS) replacing by name."""
    merged = {w.name: w for w in load_file(BUILTIN_PATH)}
    if extra is not None:
        for workload in load_file(Path(extra).expanduser()):
            merged[workload.name] = workload
    return list(merged.values())


def get_workload(name: str, workloads: list[Workload] | None = None) -> Workload:
    """One workload by name; BadInput naming close matches when unknown."""
    workloads = workloads if workloads is not None else load_workloads()
    for workload in workloads:
        if workload.name == name.strip():
            return workload
    raise unknown_choice("workload", name, [w.name for w in workloads])


def _numeric(annotation: Any) -> bool:
    """Whether a field's type admits int or float (and not bool)."""
    import typing

    args = typing.get_args(annotation)
    if args:
        return any(_numeric(a) for a in args)
    return annotation in (int, float)
