"""Peak training memory per GPU: will this model, method and setup fit on that GPU?

    peak = weights + gradients + optimizer + activations + logits + overhead          (per GPU)

All sizes are GB = 1e9 bytes. Sources of every formula: ``/work/shared/reference/memory-formulas.md``
(copied facts are cited inline); the calibrated constants and the measured accuracy are in
``models/memory_calibration.md``.

* weights: trainable working copy (4 B fp32, 2 B bf16) + frozen base. Frozen base under
  ``bf16-mixed`` is the fp32 module plus the bf16 copies autocast saves for backward (litgpt /
  AMP semantics: 4 + 2 B); QLoRA stores block linears in NF4 (4.5 bits with an fp32 absmax per 64
  weights, 4.127 bits with double quantization, Dettmers et al. 2023) and keeps embeddings, head
  and norms in 16-bit.
* gradients: trainable parameters only (4 B under fp32/bf16-mixed, 2 B under bf16-true).
* optimizer: AdamW 8 B (2 x fp32) or 4 B (2 x bf16 under bf16-true), 8-bit AdamW 2 B plus one fp32
  scale per 2048 values, SGD momentum 4/2 B; ``bf16-mixed`` adds the 4 B fp32 master copy here
  (ZeRO counts it as optimizer state: K = 12). Paged 8-bit AdamW has the same steady-state size.
* activations: per layer from the saved tensors of a pre-norm block (hidden, q/k/v, attention
  output, MLP intermediates; gated MLPs keep four f-wide tensors). FlashAttention/SDPA is assumed,
  so there is no s^2 score term. Frozen linears do not keep their inputs (LoRA on q,v keeps fewer
  MLP tensors). K/V are counted at query width: SDPA paths repeat GQA heads before attention.
  Gradient checkpointing keeps each layer's input plus one layer being recomputed.
* logits: b s V x 10 B (bf16 logits + fp32 upcast + fp32 gradient; 12 B under fp32).
* overhead: CUDA context (visible to nvidia-smi, not to PyTorch's allocator counters), allocator
  fragmentation on the dynamic terms, NCCL/bucket buffers on multi-GPU jobs, QLoRA dequantization
  buffers.
* sharding over N GPUs: ZeRO-2 divides gradients and optimizer state by N; ZeRO-3/FSDP divide
  weights too and add the unsharded units in flight (current + prefetched block, and the current
  block's gradients); ``offload`` (ZeRO-3 with parameter and optimizer offload, FSDP CPU offload)
  keeps only the in-flight units on the GPU. Activations are never divided (data parallel).

The arithmetic lives in one NumPy kernel (:func:`_kernel`) that :func:`estimate_memory` runs on
scalars and :func:`fit_sweep` on whole grids, so both paths agree bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gpuprice.errors import BadInput
from gpuprice.models.architectures import ModelArch

Method = Literal["full", "lora", "qlora"]
Optimizer = Literal["adamw", "adamw8bit", "paged_adamw8bit", "sgd"]
Precision = Literal["fp32", "bf16-mixed", "bf16-true"]
Sharding = Literal["none", "zero2", "zero3", "fsdp", "offload"]
LoraTargets = Literal["all", "qv"]
# What the peak is compared with: nvidia-smi / the card ("device"), torch.cuda.max_memory_reserved
# ("reserved") or torch.cuda.max_memory_allocated ("allocated").
MemoryMetric = Literal["device", "reserved", "allocated"]

METHODS: tuple[str, ...] = ("full", "lora", "qlora")
OPTIMIZERS: tuple[str, ...] = ("adamw", "adamw8bit", "paged_adamw8bit", "sgd")
PRECISIONS: tuple[str, ...] = ("fp32", "bf16-mixed", "bf16-true")
SHARDINGS: tuple[str, ...] = ("none", "zero2", "zero3", "fsdp")
SWEEP_STRATEGIES: tuple[str, ...] = ("none", "zero2", "zero3", "offload")
LORA_TARGETS: tuple[str, ...] = ("all", "qv")
BREAKDOWN_TERMS: tuple[str, ...] = ("weights", "gradients", "optimizer", "activations", "logits", "overhead")

GB = 1e9
GIB = 2**30

# Complexity order used by fit_sweep's least_complex (fsdp is the same tier as zero3).
_STRATEGY_CODE = {"none": 0, "zero2": 1, "zero3": 2, "fsdp": 2, "offload": 3}

# ----- fixed facts (sources in the module docstring) ---------------------------------------------
NF4_BYTES = 4.5 / 8  # 4-bit + fp32 absmax per 64 weights
NF4_DQ_BYTES = 4.127 / 8  # double quantization: FP8 absmax, second-level block 256
EIGHT_BIT_STATE_BYTES = 2 + 2 * 4 / 2048  # two 8-bit states + fp32 block scales (block 2048)
# Logits + fp32 upcast + fp32 gradient; an fp32 LM head (fp32 training, or QLoRA under
# bf16-mixed where prepare_model_for_kbit_training upcasts non-quantized layers) makes fp32 logits.
LOGIT_BYTES_16 = 10.0
LOGIT_BYTES_32 = 12.0
# Bytes per saved activation element: the compute dtype (the calibrated factor absorbs the fp32
# norm statistics and the odd upcast tensor autocast keeps).
ACT_BYTES = {"fp32": 4.0, "bf16-mixed": 2.0, "bf16-true": 2.0}
# Frozen base weights of LoRA: the module dtype (bf16-mixed = 16-bit base + fp32 adapters, as
# PEFT + AMP, DeepSpeed and torchtune run it).
FROZEN_BYTES = {"fp32": 4.0, "bf16-mixed": 2.0, "bf16-true": 2.0}
# Non-quantized QLoRA layers (embeddings, head, norms): upcast to fp32 under AMP by
# prepare_model_for_kbit_training; 16-bit in pure bf16 runs.
QLORA_REST_BYTES = {"fp32": 4.0, "bf16-mixed": 4.0, "bf16-true": 2.0}


class MemoryConstants(BaseModel):
    """The few physically meaningful constants calibrated on measured peaks (never per row).

    Values and the held-out accuracy they give: ``models/memory_calibration.md``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cuda_context_gb: float = Field(
        default=1.9, ge=0, le=5, description="CUDA context + kernels, device metric only"
    )
    fragmentation: float = Field(
        default=0.04, ge=0, le=1, description="reserved-but-unused share of the allocated peak"
    )
    activation_factor: float = Field(
        default=1.26, gt=0, le=5, description="multiplies the saved-tensor count"
    )
    qlora_dequant_layers: float = Field(
        default=2.0, ge=0, le=10, description="blocks dequantized to bf16 at once"
    )
    comm_buffer_gb: float = Field(
        default=1.3, ge=0, le=10, description="NCCL / bucket buffers per rank, gpus > 1"
    )


DEFAULT_CONSTANTS = MemoryConstants()


class TrainingSetup(BaseModel):
    """One training configuration. Build it with :meth:`checked` for one-line BadInput errors."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    arch: ModelArch
    method: Method
    optimizer: Optimizer = "adamw"
    precision: Precision = "bf16-mixed"
    seq_len: int = Field(default=2048, ge=1, le=4_194_304)
    micro_batch: int = Field(default=1, ge=1, le=65_536)
    # Unset (None) means the method's usual recipe: on for QLoRA (PEFT's
    # prepare_model_for_kbit_training enables it by default, as the QLoRA paper did), off otherwise.
    grad_checkpointing: bool = False
    lora_rank: int = Field(default=16, ge=1, le=65_536)
    lora_targets: LoraTargets = "all"
    gpus: int = Field(default=1, ge=1, le=131_072)
    sharding: Sharding = "none"
    margin: float = Field(default=0.20, ge=0.15, le=0.30)
    qlora_double_quant: bool = True
    memory_metric: MemoryMetric = "device"

    @model_validator(mode="before")
    @classmethod
    def _recipe_defaults(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("grad_checkpointing") is None:
            method = str(data.get("method", "")).strip().lower()
            data = {**data, "grad_checkpointing": method == "qlora"}
        return data

    @field_validator("method", "optimizer", "precision", "sharding", "lora_targets", mode="before")
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

    per_gpu_gb: float = Field(description="predicted peak per GPU, overhead included, margin excluded")
    planning_gb: float = Field(description="per_gpu_gb x (1 + margin)")
    margin: float
    breakdown: Breakdown
    total_params: int
    trainable_params: int
    lora_params: int
    tokens_per_micro_batch: int
    gpus: int
    sharding: str
    memory_metric: str

    def fits(self, gpu_memory_gb: float) -> bool:
        """Fits when the planning figure (peak + margin) is within the card's memory."""
        return self.planning_gb <= gpu_memory_gb

    def contract_dict(self) -> dict[str, Any]:
        """The ``gpuprice fit --json`` fields (GB rounded to 3 decimals; breakdown sums to per_gpu_gb)."""
        parts = {k: round(v, 3) for k, v in self.breakdown.model_dump().items()}
        per_gpu = round(sum(parts.values()), 3)
        return {
            "per_gpu_gb": per_gpu,
            "planning_gb": round(per_gpu * (1 + self.margin), 3),
            "margin": self.margin,
            "breakdown": parts,
            "total_params": self.total_params,
            "trainable_params": self.trainable_params,
            "lora_params": self.lora_params,
        }


# ----- per-setup features (independent of GPU count and sharding) --------------------------------
def lora_params(arch: ModelArch, rank: int, targets: str) -> int:
    """Adapter parameters: r (d_in + d_out) per adapted matrix, over layers (and experts).

    ``qv`` adapts the query and value projections; ``all`` every linear in the blocks (q, k, v, o
    and the MLP / every expert's MLP), as PEFT's ``all-linear`` does."""
    h = arch.hidden_size
    attn_qv = rank * (h + arch.q_width) + rank * (h + arch.kv_width)
    attn_layers = arch.num_layers + arch.cross_attention_layers
    if targets == "qv":
        return attn_layers * attn_qv
    attn_all = attn_qv + rank * (h + arch.kv_width) + rank * (arch.attn_out_width + h)
    mats = 3 if arch.gated_mlp else 2

    def mlp(width: int) -> int:
        return mats * rank * (h + width)

    moe_layers = arch.num_layers - arch.dense_layers if arch.is_moe else 0
    dense_layers = arch.num_layers - moe_layers
    total = attn_layers * attn_all + dense_layers * mlp(arch.intermediate_size)
    total += moe_layers * (arch.num_experts + arch.num_shared_experts) * mlp(arch.expert_width)
    return total


def _activation_elements(arch: ModelArch, method: str, targets: str, rank: int) -> float:
    """Saved elements per token per layer (before the calibrated activation factor).

    A frozen ``nn.Linear`` keeps no input for a weight gradient, so LoRA on q,v saves fewer MLP
    tensors; bitsandbytes' 4-bit matmul saves its input whenever any gradient flows, so QLoRA keeps
    every linear input like full fine-tuning does."""
    h = arch.hidden_size
    linear_inputs_saved = method in ("full", "qlora") or targets == "all"
    # attention: norm input, norm output (feeds q,k,v), q, K/V at query width, output
    attention = 2 * h + 3 * arch.q_width + arch.attn_out_width
    if arch.is_moe:
        width = (arch.experts_per_token + arch.num_shared_experts) * arch.expert_width
        dispatch = arch.experts_per_token * h  # tokens copied into expert batches
    else:
        width, dispatch = arch.intermediate_size, 0
    if arch.gated_mlp:  # gate, up, act(gate) always; norm output and product only as linear inputs
        mlp = (2 * h + 4 * width) if linear_inputs_saved else (h + 3 * width)
    else:  # fc1 output always; norm output and activation output only as linear inputs
        mlp = (2 * h + 2 * width) if linear_inputs_saved else (h + width)
    adapters = 0
    if method != "full":  # x @ A intermediates of each adapted matrix
        adapters = rank * (2 if targets == "qv" else (4 + (3 if arch.gated_mlp else 2)))
    per_layer = attention + mlp + dispatch + adapters
    if arch.cross_attention_layers:  # T5 decoder blocks also attend over the encoder output
        per_layer += (
            arch.cross_attention_layers / arch.num_layers * (h + 2 * arch.q_width + arch.attn_out_width)
        )
    return float(per_layer)


_FEATURES = (
    "train_w",  # trainable working weights, bytes (unsharded)
    "frozen_w",  # frozen base weights, bytes
    "grads",  # gradient bytes
    "optim",  # optimizer bytes (incl. fp32 master under bf16-mixed)
    "unit_w",  # bytes of the largest unit gathered by ZeRO-3/FSDP
    "unit_g",  # its gradient bytes (full fine-tuning)
    "act_layer",  # saved activation bytes of one layer (no checkpointing), before the factor
    "act_ckpt",  # bytes kept per layer under gradient checkpointing (its input)
    "layers",
    "gc",  # 1.0 when gradient checkpointing is on
    "logits",  # logits / loss buffer bytes
    "dequant",  # bytes of one block's linears dequantized to bf16 (QLoRA), else 0
    "metric",  # 0 device, 1 reserved, 2 allocated
)
_METRIC_CODE = {"device": 0, "reserved": 1, "allocated": 2}


def _per_param_bytes(precision: str, optimizer: str) -> tuple[float, float, float]:
    """(working weights, gradient, optimizer incl. master) bytes per trainable parameter."""
    weight = 4.0 if precision == "fp32" else 2.0
    grad = 2.0 if precision == "bf16-true" else 4.0
    master = 4.0 if precision == "bf16-mixed" else 0.0
    if optimizer == "adamw":
        states = 4.0 if precision == "bf16-true" else 8.0
    elif optimizer in ("adamw8bit", "paged_adamw8bit"):
        states = EIGHT_BIT_STATE_BYTES
    else:  # sgd with momentum
        states = 2.0 if precision == "bf16-true" else 4.0
    return weight, grad, states + master


def _features(setup: TrainingSetup) -> dict[str, float]:
    arch = setup.arch
    w_b, g_b, o_b = _per_param_bytes(setup.precision, setup.optimizer)
    n_lora = lora_params(arch, setup.lora_rank, setup.lora_targets) if setup.method != "full" else 0
    trainable = arch.n_params if setup.method == "full" else n_lora
    frozen_w = 0.0
    unit_byte = w_b
    fp32_head = setup.precision == "fp32"
    if setup.method == "lora":
        unit_byte = FROZEN_BYTES[setup.precision]
        frozen_w = arch.n_params * unit_byte
    elif setup.method == "qlora":
        unit_byte = NF4_DQ_BYTES if setup.qlora_double_quant else NF4_BYTES
        quant = arch.quantizable_params
        frozen_w = quant * unit_byte + (arch.n_params - quant) * QLORA_REST_BYTES[setup.precision]
        fp32_head = QLORA_REST_BYTES[setup.precision] == 4.0
    unit = arch.largest_layer_params
    unit_g = unit * (4.0 if setup.precision == "fp32" else 2.0) if setup.method == "full" else 0.0
    tokens = setup.seq_len * setup.micro_batch
    elements = _activation_elements(arch, setup.method, setup.lora_targets, setup.lora_rank)
    dequant = 0.0
    if setup.method == "qlora":  # one block's (active) linears expanded to bf16
        active_linear = arch.quantizable_params * (arch.n_active_params / arch.n_params)
        dequant = active_linear / arch.num_layers * 2.0
    act_bytes = ACT_BYTES[setup.precision]
    return {
        "train_w": trainable * w_b,
        "frozen_w": frozen_w,
        "grads": trainable * g_b,
        "optim": trainable * o_b,
        "unit_w": unit * unit_byte,
        "unit_g": unit_g,
        "act_layer": tokens * elements * act_bytes,
        "act_ckpt": tokens * arch.hidden_size * act_bytes,
        "layers": float(arch.num_layers),
        "gc": 1.0 if setup.grad_checkpointing else 0.0,
        "logits": tokens * arch.vocab_size * (LOGIT_BYTES_32 if fp32_head else LOGIT_BYTES_16),
        "dequant": dequant,
        "metric": float(_METRIC_CODE[setup.memory_metric]),
    }


# ----- the kernel --------------------------------------------------------------------------------
def _kernel(
    f: Mapping[str, np.ndarray], gpus: np.ndarray, code: np.ndarray, c: MemoryConstants
) -> dict[str, np.ndarray]:
    """Per-GPU GB by term. Inputs broadcast against each other; same float64 ops for any shape."""
    n = gpus.astype(np.float64)
    zero3 = code >= 2
    offload = code == 3
    state = f["train_w"] + f["frozen_w"]
    inflight_w = np.where(zero3, 2.0 * f["unit_w"], 0.0)
    inflight_g = np.where(zero3, f["unit_g"], 0.0)
    weights = np.where(offload, 0.0, np.where(zero3, state / n, state)) + inflight_w
    grads = np.where(offload, 0.0, np.where(code >= 1, f["grads"] / n, f["grads"])) + inflight_g
    optim = np.where(offload, 0.0, np.where(code >= 1, f["optim"] / n, f["optim"]))
    act_full = f["layers"] * f["act_layer"]
    act_ckpt = f["layers"] * f["act_ckpt"] + f["act_layer"]
    activations = c.activation_factor * np.where(f["gc"] > 0, act_ckpt, act_full)
    logits = f["logits"]
    buffers = c.qlora_dequant_layers * f["dequant"] + np.where(n > 1, c.comm_buffer_gb * GB, 0.0)
    allocated = weights + grads + optim + activations + logits + buffers
    fragmentation = np.where(f["metric"] <= 1, c.fragmentation * allocated, 0.0)
    context = np.where(f["metric"] == 0, c.cuda_context_gb * GB, 0.0)
    overhead = buffers + fragmentation + context
    per_gpu = weights + grads + optim + activations + logits + overhead
    return {
        "weights": weights / GB,
        "gradients": grads / GB,
        "optimizer": optim / GB,
        "activations": activations / GB,
        "logits": logits / GB,
        "overhead": overhead / GB,
        "per_gpu": per_gpu / GB,
    }


def estimate_memory(setup: TrainingSetup, constants: MemoryConstants = DEFAULT_CONSTANTS) -> MemoryEstimate:
    """Predicted peak memory per GPU (GB) with its breakdown."""
    feats = {k: np.float64(v) for k, v in _features(setup).items()}
    out = _kernel(feats, np.int64(setup.gpus), np.int64(_STRATEGY_CODE[setup.sharding]), constants)
    parts = {k: float(out[k]) for k in BREAKDOWN_TERMS}
    per_gpu = float(out["per_gpu"])
    n_lora = lora_params(setup.arch, setup.lora_rank, setup.lora_targets) if setup.method != "full" else 0
    return MemoryEstimate(
        per_gpu_gb=per_gpu,
        planning_gb=per_gpu * (1 + setup.margin),
        margin=setup.margin,
        breakdown=Breakdown(**parts),
        total_params=setup.arch.n_params,
        trainable_params=setup.arch.n_params if setup.method == "full" else n_lora,
        lora_params=n_lora,
        tokens_per_micro_batch=setup.seq_len * setup.micro_batch,
        gpus=setup.gpus,
        sharding=setup.sharding,
        memory_metric=setup.memory_metric,
    )


class PreparedSetups:
    """Many setups with their per-setup features computed once; :meth:`per_gpu_gb` then costs one
    vectorised kernel call per set of constants (calibration re-evaluates thousands of them)."""

    def __init__(self, setups: Sequence[TrainingSetup]) -> None:
        rows = [_features(s) for s in setups]
        self.setups = list(setups)
        self._feats = {k: np.array([r[k] for r in rows], dtype=np.float64) for k in _FEATURES}
        self._gpus = np.array([s.gpus for s in setups], dtype=np.int64)
        self._codes = np.array([_STRATEGY_CODE[s.sharding] for s in setups], dtype=np.int64)

    def per_gpu_gb(self, constants: MemoryConstants = DEFAULT_CONSTANTS) -> np.ndarray:
        return _kernel(self._feats, self._gpus, self._codes, constants)["per_gpu"]


def per_gpu_gb_many(
    setups: Sequence[TrainingSetup], constants: MemoryConstants = DEFAULT_CONSTANTS
) -> np.ndarray:
    """``estimate_memory(s).per_gpu_gb`` for many setups at once (each with its own gpus/sharding)."""
    return PreparedSetups(setups).per_gpu_gb(constants)


# ----- vectorised sweep --------------------------------------------------------------------------
SWEEP_COLUMNS = (
    "setup_index",
    "gpu",
    "gpu_count",
    "sharding",
    "per_gpu_gb",
    "planning_gb",
    "gpu_memory_gb",
    "fits",
    "headroom_gb",
    "least_complex",
)


def _as_setup(item: TrainingSetup | Mapping[str, Any]) -> TrainingSetup:
    if isinstance(item, TrainingSetup):
        return item
    return TrainingSetup.checked(**dict(item))


def fit_sweep(
    setups: Sequence[TrainingSetup | Mapping[str, Any]],
    gpu_memory_gb: Mapping[str, float],
    gpu_counts: Sequence[int],
    strategies: Sequence[str] = SWEEP_STRATEGIES,
    constants: MemoryConstants = DEFAULT_CONSTANTS,
) -> pd.DataFrame:
    """Every setup x GPU x count x strategy, vectorised (the setups' own gpus/sharding are ignored).

    ``fits``: planning_gb <= gpu_memory_gb. ``least_complex`` is True on the row of the first
    strategy that fits in the order none, zero2, zero3/fsdp, offload, per setup x GPU x count.
    Row order: setup, then GPU (mapping order), then count, then strategy (given order)."""
    unknown = [s for s in strategies if s not in _STRATEGY_CODE]
    if unknown:
        raise BadInput(f"unknown sharding strategy {unknown[0]!r}; valid: {', '.join(_STRATEGY_CODE)}")
    counts = [int(c) for c in gpu_counts]
    if any(c < 1 for c in counts):
        raise BadInput(f"gpu counts must be >= 1, got {counts}")
    resolved = [_as_setup(s) for s in setups]
    gpu_names = list(gpu_memory_gb)
    n_s, n_g, n_c, n_k = len(resolved), len(gpu_names), len(counts), len(strategies)
    if 0 in (n_s, n_g, n_c, n_k):
        return pd.DataFrame({col: [] for col in SWEEP_COLUMNS})

    rows = [_features(s) for s in resolved]
    feats = {k: np.array([r[k] for r in rows], dtype=np.float64).reshape(n_s, 1, 1, 1) for k in _FEATURES}
    gpus = np.array(counts, dtype=np.int64).reshape(1, 1, n_c, 1)
    codes = np.array([_STRATEGY_CODE[s] for s in strategies], dtype=np.int64).reshape(1, 1, 1, n_k)
    out = _kernel(feats, gpus, codes, constants)
    shape = (n_s, n_g, n_c, n_k)
    per_gpu = np.broadcast_to(out["per_gpu"], shape)
    margins = np.array([s.margin for s in resolved], dtype=np.float64).reshape(n_s, 1, 1, 1)
    planning = per_gpu * (1 + margins)
    memory = np.broadcast_to(
        np.array([gpu_memory_gb[g] for g in gpu_names], dtype=np.float64).reshape(1, n_g, 1, 1), shape
    )
    fits = planning <= memory

    # least complex fitting strategy: lowest complexity code among fitting rows (ties: first given)
    rank = np.where(fits, codes * n_k + np.arange(n_k).reshape(1, 1, 1, n_k), np.iinfo(np.int64).max)
    best = rank.argmin(axis=3)
    least = np.zeros(shape, dtype=bool)
    np.put_along_axis(least, best[..., None], True, axis=3)
    least &= fits

    frame = pd.DataFrame(
        {
            "setup_index": np.repeat(np.arange(n_s), n_g * n_c * n_k),
            "gpu": np.tile(np.repeat(np.array(gpu_names, dtype=object), n_c * n_k), n_s),
            "gpu_count": np.tile(np.repeat(np.array(counts), n_k), n_s * n_g),
            "sharding": np.tile(np.array(list(strategies), dtype=object), n_s * n_g * n_c),
            "per_gpu_gb": per_gpu.ravel(),
            "planning_gb": planning.ravel(),
            "gpu_memory_gb": memory.ravel(),
            "fits": fits.ravel(),
            "headroom_gb": (memory - planning).ravel(),
            "least_complex": least.ravel(),
        }
    )
    return frame
