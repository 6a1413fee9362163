"""Training setups for the memory model: the inputs (:class:`TrainingSetup`), the calibrated
constants (:class:`MemoryConstants`) and the estimate a setup gets (:class:`MemoryEstimate`).

The arithmetic is in :mod:`gpuprice.models.memory`; this module is what callers build and read.
Slightly over ~400 lines: the setup's recipe defaults and the estimate's contract fields are one
boundary type each, kept beside the assumptions text that explains them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gpuprice.errors import BadInput
from gpuprice.models.architectures import REPRESENTATIVE_VOCAB, ModelArch
from gpuprice.models.choices import (
    ActivationCheckpointing,
    Attention,
    Framework,
    LoraTargets,
    LossKernel,
    MemoryMetric,
    MemoryStrategy,
    Method,
    Optimizer,
    Precision,
)
from gpuprice.models.fit_verdict import DEFAULT_MARGIN, MARGIN_MAX, MARGIN_MIN, FitVerdict, judge, planning_gb
from gpuprice.models.frameworks import DEFAULTS, fsdp_keeps_recomputed_inputs, qlora_fp32_stream

# A memory strategy is a sharding or CPU offload (what fit sweeps also try).
Sharding = MemoryStrategy
BREAKDOWN_TERMS: tuple[str, ...] = ("weights", "gradients", "optimizer", "activations", "logits", "overhead")

GB = 1e9
GIB = 2**30

# Complexity order used by fit_sweep's least_complex (fsdp is the same tier as zero3).
_STRATEGY_CODE = {"none": 0, "zero2": 1, "zero3": 2, "fsdp": 2, "offload": 3}


class MemoryConstants(BaseModel):
    """The few physically meaningful constants calibrated on measured peaks (never per row).

    Values and the held-out accuracy they give: ``models/memory_calibration.md``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cuda_context_gb: float = Field(
        default=1.5, ge=0, le=5, description="CUDA context + kernels, device metric only"
    )
    fragmentation: float = Field(
        default=0.06,
        ge=0,
        le=1,
        description="reserved-but-unused share of the pool built before the optimizer step",
    )
    activation_factor: float = Field(
        default=1.02, gt=0, le=5, description="multiplies the saved-tensor count"
    )
    qlora_dequant_layers: float = Field(
        default=2.25, ge=0, le=10, description="blocks dequantized to bf16 at once"
    )
    comm_buffer_gb: float = Field(
        default=1.6, ge=0, le=10, description="NCCL / bucket buffers per rank, gpus > 1"
    )


DEFAULT_CONSTANTS = MemoryConstants()


class TrainingSetup(BaseModel):
    """One training configuration. Build it with :meth:`checked` for one-line BadInput errors.

    Unset (``None``) inputs take the framework's or the method's usual recipe: ``precision`` the
    framework's training dtype, ``loss`` its loss kernel, ``activation_checkpointing`` full for
    QLoRA (PEFT's ``prepare_model_for_kbit_training`` enables it, as the QLoRA paper did) and none
    otherwise. ``grad_checkpointing`` is the alias of ``activation_checkpointing == "full"``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    arch: ModelArch
    method: Method
    optimizer: Optimizer = "adamw"
    precision: Precision = "bf16-mixed"
    seq_len: int = Field(default=2048, ge=1, le=4_194_304)
    micro_batch: int = Field(default=1, ge=1, le=65_536)
    grad_checkpointing: bool = False
    activation_checkpointing: ActivationCheckpointing = "none"
    framework: Framework = "hf"
    compile: bool = False
    # None resolves to the framework's kernel, or eager for models that build explicit scores
    attention: Attention = "sdpa"
    loss: LossKernel = "full"
    cpu_offload_activations: bool = False
    # The training loop keeps the model's output (with its logits) referenced through backward
    # and the optimizer step (AnswerDotAI/fsdp_qlora train.py: ``output = None`` only after them).
    logits_kept: bool = False
    optimizer_in_backward: bool = False
    # DeepSpeed ZeRO-3 (hf): the model was built before ``deepspeed.zero.Init`` ran (e.g.
    # ``from_pretrained`` before ``TrainingArguments(deepspeed=...)``), so DeepSpeed's memory-efficient
    # linear was never patched in and torch's linear keeps each gathered 16-bit weight until
    # backward. Off: HF's documented order (arguments first), where ``from_pretrained`` runs under it.
    built_before_zero_init: bool = False
    # hf under FSDP with LoRA/QLoRA: transformers' own checkpointing, reentrant (its default), runs
    # around FSDP's units, so each recompute re-enters a frozen unit's pre-forward and FSDP hooks
    # the recompute's inputs until backward ends (memory_features._frozen_units_keep_inputs). Off:
    # ``use_reentrant=False``, or checkpointing applied inside the units (accelerate's
    # ``fsdp_activation_checkpointing``; torch's ``apply_activation_checkpointing`` after wrapping).
    reentrant_checkpointing: bool = True
    # An eager 16-bit RMSNorm that upcasts (transformers', torchtune's, litgpt's since 2023-10-24)
    # keeps its fp32 copy in place of its input; lit-gpt before that kept the 16-bit input alone.
    norm_upcasts: bool = True
    # Micro-batches per optimizer step (HF Trainer's default 1). The throughput model's
    # once-per-step terms (optimizer step, DDP all-reduce, ZeRO-2 gather) and the memory peak's
    # gradients (:attr:`gradient_accumulation`) both follow it.
    grad_accum: int = Field(default=1, ge=1, le=65_536)
    # Batches of varying length (None: the framework's data path, FrameworkDefaults.variable_lengths)
    variable_lengths: bool = True
    lora_rank: int = Field(default=16, ge=1, le=65_536)
    lora_targets: LoraTargets = "all"
    gpus: int = Field(default=1, ge=1, le=131_072)
    sharding: Sharding = "none"
    # Fraction of the card kept free for planning (models/fit_verdict.py): 0 judges the peak alone.
    margin: float = Field(default=DEFAULT_MARGIN, ge=MARGIN_MIN, le=MARGIN_MAX)
    qlora_double_quant: bool = True
    memory_metric: MemoryMetric = "device"

    @property
    def gradient_accumulation(self) -> bool:
        """Do gradients persist across micro-batches (``grad_accum`` > 1)? Then they coexist with
        the next forward's activations. With one micro-batch per step, ``zero_grad(set_to_none=True)``
        (PyTorch's default since 2.0; HF Trainer, torchtune) frees them after each step and backward
        allocates them as it releases the saved activations."""
        return self.grad_accum > 1

    @model_validator(mode="before")
    @classmethod
    def _recipe_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        framework = str(data.get("framework") or "hf").strip().lower()
        data["framework"] = framework
        known = DEFAULTS.get(framework)
        if data.get("precision") is None:
            data["precision"] = known.precision if known else "bf16-mixed"
        if data.get("loss") is None:
            data["loss"] = known.loss if known else "full"
        if data.get("variable_lengths") is None:
            data["variable_lengths"] = known.variable_lengths if known else True
        if data.get("attention") is None:
            data["attention"] = default_attention(data.get("arch"), framework)
        method = str(data.get("method", "")).strip().lower()
        gc = data.get("grad_checkpointing")
        ac = data.get("activation_checkpointing")
        if isinstance(ac, str):
            ac = ac.strip().lower()
        if ac is None and gc is None:
            ac = "full" if method == "qlora" else "none"
        elif ac is None:
            ac = "full" if gc else "none"
        elif gc is not None and bool(gc) != (ac == "full"):
            raise ValueError(
                f"grad_checkpointing {gc} contradicts activation_checkpointing {ac!r} "
                "(grad-checkpointing is the alias of activation-checkpointing full)"
            )
        data["activation_checkpointing"] = ac
        data["grad_checkpointing"] = ac == "full"
        return data

    @field_validator(
        "method",
        "optimizer",
        "precision",
        "sharding",
        "lora_targets",
        "loss",
        "memory_metric",
        "attention",
        mode="before",
    )
    @classmethod
    def _lowercase(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _sane(self) -> TrainingSetup:
        if self.method != "full" and self.lora_rank > self.arch.hidden_size:
            raise ValueError(f"lora_rank {self.lora_rank} exceeds the hidden size {self.arch.hidden_size}")
        if self.seq_len * self.micro_batch > 67_108_864:
            raise ValueError(
                f"seq_len x micro_batch = {self.seq_len * self.micro_batch} tokens is absurd (max 2^26)"
            )
        return self

    @classmethod
    def checked(cls, **fields: Any) -> TrainingSetup:
        """Validate, turning pydantic's report into one BadInput line naming the bad value."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise BadInput(one_line_error(exc)) from None


def one_line_error(exc: ValidationError) -> str:
    """First validation problem as ``field: message (got value)``."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()) if p != "arch") or "setup"
    message = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    value = err.get("input")
    shown = "" if isinstance(value, (dict, BaseModel)) or value is None else f" (got {value!r})"
    return f"{where.replace('_', '-')}: {message}{shown}"


def default_attention(arch: Any, framework: str) -> str:
    """The attention kernel a setup runs unless told: eager for models whose code builds explicit
    scores (``EXPLICIT_SCORE_MODEL_TYPES``), else the framework's (``FrameworkDefaults.attention``)."""
    from gpuprice.models.architectures import EXPLICIT_SCORE_MODEL_TYPES

    model_type = arch.get("model_type") if isinstance(arch, dict) else getattr(arch, "model_type", None)
    if model_type in EXPLICIT_SCORE_MODEL_TYPES:
        return "eager"
    known = DEFAULTS.get(framework)
    return known.attention if known else "sdpa"


class Breakdown(BaseModel):
    """Per-GPU GB by term; the six sum to ``per_gpu_gb``."""

    model_config = ConfigDict(frozen=True)

    weights: float
    gradients: float
    optimizer: float
    activations: float
    logits: float
    overhead: float

    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations + self.logits + self.overhead


class MemoryEstimate(BaseModel):
    """Predicted peak memory per GPU for one :class:`TrainingSetup`."""

    model_config = ConfigDict(frozen=True)

    per_gpu_gb: float = Field(
        description="predicted peak per GPU as memory_metric counts it, overhead included, margin excluded"
    )
    planning_gb: float = Field(description="per_gpu_gb / (1 - margin): the card that keeps the margin free")
    device_gb: float = Field(
        description="the device figure (CUDA context included) that fits judges: what must stay "
        "resident on the card (a paged optimizer's evictable states left out)"
    )
    paged_optimizer_gb: float = Field(
        default=0.0,
        description="part of per_gpu_gb: paged optimizer states that page out to CPU RAM when the card "
        "runs short (in per_gpu_gb, not in device_gb or the verdict)",
    )
    given_way_gb: float = Field(
        default=0.0,
        description="on the named card: cached loss regions and paged states it takes back before "
        "running out, left out of per_gpu_gb (which then tops out at the card)",
    )
    ceiling_gb: float | None = Field(
        default=None,
        description="on the named card: the most memory_metric can read there (the card, less the "
        "CUDA context for PyTorch's counters); None without a card",
    )
    margin: float
    breakdown: Breakdown
    cuda_context_gb: float = Field(description="part of overhead: CUDA context (device metric only)")
    allocator_slack_gb: float = Field(description="part of overhead: reserved-but-unallocated memory")
    assumptions: tuple[str, ...] = ()
    total_params: int
    trainable_params: int
    lora_params: int
    tokens_per_micro_batch: int
    gpus: int
    sharding: str
    memory_metric: str

    @property
    def device_planning_gb(self) -> float:
        """The device figure with the planning margin: the card size that keeps the margin free."""
        return planning_gb(self.device_gb, self.margin)

    def verdict(self, gpu_memory_gb: float, band: tuple[float, float] | None = None) -> FitVerdict:
        """fits / tight / does_not_fit of the device figure (any metric) on a card of
        ``gpu_memory_gb`` usable 1e9 bytes (``catalog.usable_memory_gb``)."""
        return judge(self.device_gb, gpu_memory_gb, self.margin, band)

    def fits(self, gpu_memory_gb: float) -> bool:
        """The verdict is ``fits``: the device figure leaves the margin free on the card."""
        return self.verdict(gpu_memory_gb).verdict == "fits"

    def contract_dict(self) -> dict[str, Any]:
        """The ``gpuprice fit --json`` fields (GB rounded to 3 decimals). In JSON the CUDA context
        and the allocator slack are their own breakdown entries (``cuda_context_gb``,
        ``allocator_slack_gb``) and ``overhead`` is the rest (QLoRA dequantisation and
        communication buffers), so the breakdown's values still sum to per_gpu_gb."""
        parts = {k: round(v, 3) for k, v in self.breakdown.model_dump().items()}
        # The peak itself, rounded once (the band and the verdict round the same figure); the
        # breakdown's overhead takes the parts' rounding so the values still sum to it.
        per_gpu = round(self.per_gpu_gb, 3)
        context, slack = round(self.cuda_context_gb, 3), round(self.allocator_slack_gb, 3)
        return {
            "per_gpu_gb": per_gpu,
            "planning_gb": round(planning_gb(per_gpu, self.margin), 3),
            "margin": self.margin,
            "breakdown": {
                **parts,
                "overhead": round(per_gpu - (sum(parts.values()) - parts["overhead"]) - context - slack, 3),
                "cuda_context_gb": context,
                "allocator_slack_gb": slack,
            },
            "memory_metric": self.memory_metric,
            "device_gb": round(self.device_gb, 3),
            "paged_optimizer_gb": round(self.paged_optimizer_gb, 3),
            "given_way_gb": round(self.given_way_gb, 3),
            "device_planning_gb": round(self.device_planning_gb, 3),
            "assumptions": list(self.assumptions),
            "total_params": self.total_params,
            "trainable_params": self.trainable_params,
            "lora_params": self.lora_params,
        }


_LOSS_TEXT = {
    "full": "loss: whole logits upcast to fp32 (16-bit logits + fp32 copy + fp32 gradient)",
    "chunked": "loss: chunked cross-entropy (one 16-bit logits copy; fp32 one chunk at a time)",
    "fused": "loss: fused linear cross-entropy (no logits tensor)",
    "full-16bit": "loss: cross-entropy on the whole 16-bit logits, no fp32 upcast (16-bit log-softmax, "
    "its gradient and the input gradient; autocast still upcasts under bf16-mixed)",
}
_AC_TEXT = {
    "none": "activations: every saved tensor kept (no recomputation)",
    "selective": "activations: op-level selective recompute keeps block input, SDPA output and every "
    "2nd matmul output; the rebuilt rest after the loss's backward freed the logits (the larger counts)",
    "full": "activations: full recompute keeps each block input plus one block rebuilt in backward, "
    "after the loss's backward freed the logits (the peak holds the larger of the two)",
}
_METRIC_TEXT = {
    "device": "per_gpu_gb = device (nvidia-smi): CUDA context and allocator slack included",
    "reserved": "per_gpu_gb = torch.cuda.max_memory_reserved: allocator slack included, CUDA context not",
    "allocated": "per_gpu_gb = torch.cuda.max_memory_allocated: no allocator slack, no CUDA context",
}


def _representative_text(arch: ModelArch) -> str:
    return (
        f"shape unknown: a representative dense decoder of {arch.n_params / 1e9:.2f}B parameters "
        f"(Llama-2-style: {REPRESENTATIVE_VOCAB:,}-token vocabulary, multi-head attention, "
        f"{arch.num_layers} layers x {arch.hidden_size}); a larger vocabulary (Llama-3's 128,256, "
        "Qwen's 151,936) holds proportionally larger logits; --config PATH gives the real shape, and "
        "the band is that of measured runs predicted from their size alone"
    )


def assumptions(setup: TrainingSetup) -> tuple[str, ...]:
    """The framework behaviours and recipe choices behind an estimate, one line each."""
    defaults = DEFAULTS[setup.framework]
    lines = [defaults.summary, _LOSS_TEXT[setup.loss], _AC_TEXT[setup.activation_checkpointing]]
    if setup.arch.representative:
        lines.insert(0, _representative_text(setup.arch))
    if setup.arch.logit_softcapping and setup.loss != "fused":
        lines.append("soft-capped logits (tanh): its saved output is one more logits-sized tensor")
    if setup.compile or defaults.fused_kernels:
        if setup.arch.gated_mlp:
            lines.append("fused elementwise kernels: no fp32 norm copies or activation outputs saved")
        else:
            lines.append(
                "fused elementwise kernels: no fp32 norm copies saved; act(fc1) is saved where fc2's "
                "gradient reads it (a non-gated MLP)"
            )
    elif setup.arch.norm_type == "layernorm":
        lines.append(
            "eager kernels: torch's LayerNorm keeps its input (its fp32 cast under autocast), no copy "
            "of its own; the activation's output saved"
        )
    else:
        lines.append(
            "eager kernels: RMSNorm keeps an fp32 copy in place of its 16-bit input; act(gate) saved"
        )
    if setup.framework == "hf" and setup.arch.gelu_new and not (setup.compile or defaults.fused_kernels):
        lines.append(
            "transformers' gelu_new is a Python tanh formula: it keeps three MLP-wide tensors beside its input"
        )
    if setup.method == "full" and setup.sharding in ("zero3", "fsdp") and setup.precision == "bf16-mixed":
        if sharded_fp32_master(setup):
            lines.append("sharded state: fp32 params (= master) + fp32 grads + AdamW states, 16 B/param / N")
        elif setup.framework == "hf" and setup.sharding == "zero3":
            lines.append(
                "DeepSpeed ZeRO-3: 16-bit params + 16-bit gradient partitions (kept from init) + fp32 master "
                "+ AdamW states, 16 B/param / N; at the step one sub-group's gradients are flattened and "
                "cast to fp32 (up to 1e9 elements per GPU); its gradient bucket is allocated even on one GPU"
            )
        else:
            lines.append(
                "sharded state: 16-bit params + fp32 grads + fp32 master + AdamW states, 18 B/param / N"
            )
    if setup.cpu_offload_activations or (
        setup.activation_checkpointing == "full" and defaults.offloads_checkpoints
    ):
        lines.append("saved activations offloaded to CPU RAM (two layers resident)")
    if setup.gradient_accumulation and not setup.optimizer_in_backward:
        lines.append(
            f"gradient accumulation ({setup.grad_accum} micro-batches per step): gradients persist "
            "beside the next forward's activations"
        )
    elif not setup.optimizer_in_backward:
        lines.append(
            "one micro-batch per step (grad_accum 1): zero_grad(set_to_none=True) frees the gradients, "
            "so they take the memory backward frees (peak holds the larger)"
        )
    if setup.optimizer_in_backward:
        lines.append("optimizer step fused into backward: gradients freed as they are applied")
    if setup.optimizer in ("paged_adamw", "paged_adamw8bit"):
        lines.append(
            "paged optimizer (bitsandbytes): states of tensors >= 1e5 elements live in CUDA unified "
            "memory and page out to CPU RAM when the card runs short (slower steps): in per_gpu_gb "
            "(the peak if nothing paged out), not in device_gb or the verdict (paged_optimizer_gb)"
        )
    if qlora_fp32_activations(setup):
        lines.append(
            "QLoRA with fp32 norms (PEFT prepare_model_for_kbit_training): bitsandbytes' 4-bit linears "
            "return fp32 for them, so every layer input after the first is fp32 (not under ZeRO-3/FSDP, "
            "where trl skips the cast)"
        )
    if (
        setup.built_before_zero_init
        and setup.framework == "hf"
        and setup.sharding == "zero3"
        and setup.gpus > 1
    ):
        lines.append(
            "model built before DeepSpeed's zero.Init: its memory-efficient linear was never patched "
            "in, so torch's linear keeps every gathered 16-bit weight (the head's alone under "
            "recomputation) until backward"
        )
    if (
        setup.sharding == "fsdp"
        and setup.activation_checkpointing == "full"
        and fsdp_keeps_recomputed_inputs(setup.framework, setup.method, reentrant_checkpointing=True)
    ):
        lines.append(
            "accelerate's FSDP with transformers' reentrant checkpointing (its default) keeps every "
            "block's checkpointed input and its gradient until backward ends (frozen FSDP units under "
            "peft's wrap policy): counted; --non-reentrant-checkpointing when the run sets "
            "gradient_checkpointing_kwargs={'use_reentrant': False} or fsdp_config activation_checkpointing"
            if setup.reentrant_checkpointing
            else "non-reentrant checkpointing (or checkpointing inside FSDP's units): FSDP keeps no "
            "recomputed block inputs"
        )
    if setup.logits_kept and setup.loss in ("full", "full-16bit"):
        lines.append(
            "the training loop keeps the model output referenced through backward and the step: its "
            "logits (fp32 where the loss upcasts) stay beside the loss and the rebuilt layer"
        )
    lines.append(_attention_text(setup))
    if setup.variable_lengths and setup.loss != "fused":
        lines.append(
            "variable-length batches: reserved/nvidia-smi also hold an earlier step's cached loss "
            "region, freed by the allocator before an OOM: in per_gpu_gb (reserved, device), not in "
            "device_gb or the verdict"
        )
    lines.append(_METRIC_TEXT[setup.memory_metric])
    return tuple(lines)


def qlora_fp32_activations(setup: TrainingSetup) -> bool:
    """Does a mixed-precision QLoRA run keep an fp32 residual stream (``frameworks.qlora_fp32_stream``)?
    Asked without the sharding: the memory kernel drops the term under ZeRO-3/FSDP itself, since a
    sweep tries every strategy on one setup."""
    return qlora_fp32_stream(setup.framework, setup.method, setup.precision)


def sharded_fp32_master(setup: TrainingSetup, sharding: str | None = None) -> bool:
    """Are the sharded fp32 parameters the master copy under ZeRO-3/FSDP (16 B/param for full
    bf16-mixed AdamW, not DeepSpeed's 18)? FSDP2 with ``MixedPrecisionPolicy`` (torchtitan) for
    either sharding value; accelerate's FSDP (hf ``--sharding fsdp``), which upcasts the flat
    parameters to fp32 (``FrameworkDefaults.fsdp_fp32_master``). ``sharding`` overrides the setup's
    (sweeps try every strategy on one setup)."""
    if setup.precision != "bf16-mixed":
        return False
    defaults = DEFAULTS[setup.framework]
    sharding = setup.sharding if sharding is None else sharding
    return defaults.sharded_fp32_master or (defaults.fsdp_fp32_master and sharding == "fsdp")


def keeps_scores(setup: TrainingSetup) -> bool:
    """Does the attention keep a seq x seq score matrix per head (eager, or a model whose code
    builds explicit scores whatever kernel is asked for)?"""
    from gpuprice.models.architectures import EXPLICIT_SCORE_MODEL_TYPES

    return setup.attention == "eager" or setup.arch.model_type in EXPLICIT_SCORE_MODEL_TYPES


def keeps_grouped_kv_narrow(setup: TrainingSetup) -> bool:
    """Are grouped K/V heads kept at their own width? Only where the framework hands them to
    FlashAttention as they are (``FrameworkDefaults.flash_takes_grouped_kv``); SDPA and eager paths
    repeat them into query-width copies first (transformers' repeat_kv: expand + reshape)."""
    return setup.attention == "flash" and DEFAULTS[setup.framework].flash_takes_grouped_kv


def _attention_text(setup: TrainingSetup) -> str:
    if keeps_scores(setup):
        why = (
            "eager attention"
            if setup.attention == "eager"
            else f"{setup.arch.model_type} code builds explicit scores (ALiBi / position bias)"
        )
        return (
            f"attention: {why} keeps fp32 softmax + 16-bit probabilities (6 B per score, b x heads x "
            "seq^2) per stored layer, and 10 B per score in the layer running backward"
        )
    text = f"attention: {setup.attention} kernel keeps no seq x seq matrix (O(seq) statistics only)"
    if setup.arch.num_kv_heads < setup.arch.num_heads:
        narrow = keeps_grouped_kv_narrow(setup)
        kept = "at their own width" if narrow else "at query width (repeated into copies before the kernel)"
        text += f"; grouped K/V heads kept {kept}"
    return text
