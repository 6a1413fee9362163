"""Benchmark rows (``throughput_public.csv`` format) -> throughput-model cases.

Calibration tooling only: the product predicts with :mod:`gpuprice.models.throughput`; the fit
that uses these cases is :mod:`gpuprice.models.calibration.throughput_fit`. Slightly over ~400
lines: each source's way of stating a run (GPU names, sharding texts, notes) is read here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuprice.errors import BadInput
from gpuprice.models.calibration.lora_notes import stated_lora_targets
from gpuprice.models.choices import ATTENTIONS
from gpuprice.models.frameworks import runs_every_expert
from gpuprice.models.gpu_hardware import (
    GpuProfile,
    fabric_per_gpu,
    gpu_profile,
)
from gpuprice.models.throughput import Cases, ModelShape, cases_from_columns, evaluate
from gpuprice.models.throughput_attention import attention_inputs
from gpuprice.models.throughput_parameters import (
    CALIBRATED_PARAMETERS,
    ThroughputParameters,
)


# --------------------------------------------------------------------------- benchmark rows
@dataclass(frozen=True)
class BenchmarkCase:
    """One row of a throughput_public.csv-style table, interpreted."""

    shape: ModelShape
    profile: GpuProfile
    method: str
    gpus: int
    seq_len: int
    micro_batch: int
    checkpointing: bool
    compiled: bool
    precision: str
    sharding: str
    # Micro-batches per optimizer step (``grad_accum`` column; 1 when the table does not say).
    grad_accum: int = 1
    # Attention heads whose seq x seq scores cross HBM: the model's heads when the row's
    # ``attention`` column says ``eager`` (no fused kernel), else 0.
    score_heads: float = 0.0
    # HBM bytes per trainable parameter of one optimizer step (throughput.optimizer_step_bytes).
    optimizer_bytes: float = 92.0  # throughput_recipe.optimizer_step_bytes() (hf, foreach AdamW, bf16-mixed)
    # SDPA with a padding mask / fp32 inputs (throughput_attention.attention_inputs): from the
    # row's ``attention`` column (a contract value), its framework and micro-batch; a row that
    # names no attention ran a fused causal kernel without padding.
    masked_heads: float = 0.0
    mask_bytes: float = 2.0
    fp32_attention: bool = False
    # HBM bytes per token of PEFT's fp32 adapters on a bf16 base without autocast
    # (throughput_adapters): hf LoRA/QLoRA rows under bf16-true, unless the row says the adapters
    # were cast to bf16 with the model ("after the LoRA wrap": VectorLM's model.bfloat16()).
    adapter_bytes: float = 0.0
    stream_bytes: float = 0.0
    # Selective checkpointing (``act_ckpt`` "selective"): forward FLOPs per token recomputed and
    # the share of attention recomputed. Op-level (torchtitan's ``selective_ac_option = 'op'``):
    # every second matmul of a block, SDPA saved. Layer-level ("selective layer" in the notes:
    # torchtitan's default option '2', "checkpoint every other layer", config_manager.py
    # @4d88a8a4): half the layers recomputed whole.
    selective_flops: float = 0.0
    selective_attention: float = 0.0
    # transformers' Llama 4 computes every routed expert for every token (frameworks.runs_every_expert)
    unrouted_params: float = 0.0
    # Inter-node fabric the source states, per GPU as the model counts it (the node's aggregate over
    # GPUS_PER_NODE: a ring moves (n-1)/n of the data through each node's links whatever the GPUs
    # per node), None: the GPU family's default (gpu_hardware.DEFAULT_FABRIC_GBPS).
    fabric_gbps_per_gpu: float | None = None


def _text(row: Mapping[str, object], key: str) -> str:
    value = row.get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def row_number(row: Mapping[str, object], key: str) -> float | None:
    """A numeric cell ("1,024" allowed); None when empty, not a number or not finite."""
    text = _text(row, key).replace(",", "")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def benchmark_gpu(raw: str) -> GpuProfile:
    """Map a benchmark's GPU text ("h100_80gb", "A100-40GB-SXM", "RTX 6000 Ada 48GB") to a profile."""
    from gpuprice.scrapers.gpu_names import UNKNOWN, normalize_gpu

    text = raw.replace("_", " ")
    slug = normalize_gpu(text)
    if slug != UNKNOWN:
        return gpu_profile(slug)
    raise BadInput(f"unknown benchmark GPU {raw!r}")


def _benchmark_method(workload: str, precision: str) -> str:
    text = workload.lower()
    if "qlora" in text:
        return "qlora"
    if "lora" in text:
        quantized = re.search(r"nf4|int4|4bit|gptq|bnb", precision.lower())
        return "qlora" if quantized else "lora"
    return "full"


def _benchmark_precision(precision: str) -> str:
    text = precision.lower()
    if "bf16-true" in text:  # pure bf16: weights, gradients and optimizer states in bf16
        return "bf16-true"
    if "fp8" in text or "float8" in text:
        return "fp8"
    if "fp32" in text or "float32" in text or text == "tf32":
        return "fp32"
    return "bf16-mixed"  # bf16, amp_bf16, fp16 (same tensor rate), bf16+nf4, ...


def _benchmark_sharding(text: str, gpus: int) -> str:
    upper = text.upper()
    if re.search(r"\b(?:TP|PP)\s*([2-9]|\d\d+)", upper):
        return "model_parallel"
    if gpus <= 1:
        return "none"
    stage = re.search(r"(?:ZERO|STAGE)[\s_-]*([123])", upper)
    if stage:
        return {"1": "none", "2": "zero2", "3": "zero3"}[stage.group(1)]  # ZeRO-1 moves DDP's volume
    if "SHARD_GRAD_OP" in upper:
        return "zero2"
    if re.search(r"FULL_SHARD|HYBRID|FSDP", upper):
        return "fsdp"
    if re.search(r"\bTP\s*1\b", upper):
        return "model_parallel"  # Megatron without splitting: data parallel with distributed optimizer
    return "none"  # DDP, NO_SHARD, or not stated


# Published shapes of dense decoder families, (billions of parameters, layers, hidden): GPT-3
# (Brown et al. 2020, Table 2.1; MPT reuses them), Llama-2-70B and Llama-3.1-405B config.json.
# Small models are deeper than wide-and-shallow "h/L = 128" scaling suggests, which matters for
# the attention FLOPs at long context.
_PUBLISHED_SHAPES = np.array(
    [
        (0.125, 12, 768),
        (0.35, 24, 1024),
        (0.76, 24, 1536),
        (1.3, 24, 2048),
        (2.7, 32, 2560),
        (6.7, 32, 4096),
        (13.0, 40, 5120),
        (70.0, 80, 8192),
        (175.0, 96, 12288),
        (405.0, 126, 16384),
    ]
)
_SIZE_IN_NAME = re.compile(r"(?<![0-9.])(\d+(?:\.\d+)?)\s*([mb])\b", re.I)


def shape_from_size(params_b: float, nominal_b: float | None = None) -> ModelShape:
    """A dense shape for a model known only by size (log-interpolated published shapes).

    ``nominal_b`` (the size in the model's name, "MPT-125m") picks the shape when the reported
    count is inflated by, e.g., a learned position table sized for a long context.
    """
    size = nominal_b if nominal_b and 0.5 <= nominal_b / params_b <= 2 else params_b
    x = np.log(size)
    grid = np.log(_PUBLISHED_SHAPES[:, 0])
    slope_lo = (np.log(_PUBLISHED_SHAPES[1, 1:]) - np.log(_PUBLISHED_SHAPES[0, 1:])) / (grid[1] - grid[0])
    slope_hi = (np.log(_PUBLISHED_SHAPES[-1, 1:]) - np.log(_PUBLISHED_SHAPES[-2, 1:])) / (grid[-1] - grid[-2])
    if x < grid[0]:
        layers, hidden = np.exp(np.log(_PUBLISHED_SHAPES[0, 1:]) + slope_lo * (x - grid[0]))
    elif x > grid[-1]:
        layers, hidden = np.exp(np.log(_PUBLISHED_SHAPES[-1, 1:]) + slope_hi * (x - grid[-1]))
    else:
        layers = np.exp(np.interp(x, grid, np.log(_PUBLISHED_SHAPES[:, 1])))
        hidden = np.exp(np.interp(x, grid, np.log(_PUBLISHED_SHAPES[:, 2])))
    n = params_b * 1e9
    return ModelShape(
        n_params=n,
        n_active_params=n,
        layers=max(1, round(layers)),
        hidden=round(hidden),
        attn_width=float(round(hidden)),
    )


def _nominal_size_b(model: str) -> float | None:
    match = _SIZE_IN_NAME.search(model)
    if not match:
        return None
    value = float(match.group(1))
    return value / 1000 if match.group(2).lower() == "m" else value


_FABRIC_PER_NODE = re.compile(r"(\d+(?:\.\d+)?)\s*gbps per node", re.I)


def benchmark_fabric(sharding: str) -> float | None:
    """The inter-node fabric a row's ``sharding`` text states ("... 400 Gbps per node ..."), as the
    model's per-GPU figure (node aggregate / GPUS_PER_NODE); None when it states none."""
    match = _FABRIC_PER_NODE.search(sharding)
    return fabric_per_gpu(float(match.group(1))) if match else None


def _attention_heads(model: str, shape: ModelShape) -> float:
    """The model's query heads (catalog), else hidden / 128 (the usual head width)."""
    from gpuprice.models.architectures import find_model

    arch = find_model(model) if model else None
    return float(arch.num_heads) if arch is not None else max(1.0, round(shape.hidden / 128))


def _model_type(model: str) -> str:
    from gpuprice.models.architectures import find_model

    arch = find_model(model) if model else None
    return arch.model_type if arch is not None else ""


def _adapter_bytes(row: Mapping[str, object], method: str, precision: str, checkpointing: bool) -> float:
    from gpuprice.models.architectures import find_model
    from gpuprice.models.throughput_adapters import adapter_bytes_per_token, fp32_adapters

    arch = find_model(_text(row, "model")) if _text(row, "model") else None
    cast_with_model = "after the lora wrap" in _text(row, "notes").lower()
    if arch is None or cast_with_model or not fp32_adapters(_framework(row), method, precision):
        return 0.0
    targets = _lora_targets(row)
    return adapter_bytes_per_token(arch, targets, checkpointing)


def _stream_bytes(
    row: Mapping[str, object], method: str, precision: str, checkpointing: bool, gpus: int
) -> float:
    """hf QLoRA's fp32 residual stream (frameworks.qlora_fp32_stream) for a bitsandbytes base: PEFT
    does not upcast GPTQ/AWQ bases' other layers (memory_rows reads them the same way)."""
    from gpuprice.models.architectures import find_model
    from gpuprice.models.frameworks import qlora_fp32_stream
    from gpuprice.models.throughput_fp32_stream import fp32_stream_bytes_per_token

    arch = find_model(_text(row, "model")) if _text(row, "model") else None
    sharding = _benchmark_sharding(_text(row, "sharding"), gpus)
    prequantized = re.search(r"gptq|awq", _text(row, "precision").lower())
    if arch is None or prequantized or not qlora_fp32_stream(_framework(row), method, precision, sharding):
        return 0.0
    targets = _lora_targets(row)
    return fp32_stream_bytes_per_token(arch, targets, checkpointing)


def _lora_targets(row: Mapping[str, object]) -> str:
    """The row's ``lora_targets`` column, else what its notes state, else ``all``."""
    return _text(row, "lora_targets").lower() or stated_lora_targets(_text(row, "notes")) or "all"


def _framework(row: Mapping[str, object]) -> str:
    """The trainer a row's source documents, for its documented defaults (frameworks.DEFAULTS):
    the repository name when it is one of them (pytorch/torchtune -> torchtune), else hf."""
    from gpuprice.models.frameworks import DEFAULTS

    repository = _text(row, "source").split()[0].lower() if _text(row, "source") else ""
    name = repository.rsplit("/", 1)[-1]
    return name if name in DEFAULTS else "hf"


def _optimizer_bytes(row: Mapping[str, object], framework: str, sharding: str) -> float:
    """One optimizer step's HBM bytes per parameter: AdamW as the framework runs it (foreach or
    fused, fp32 states under mixed precision, 16-bit under bf16-true: the row's when it says
    so, else the framework's default), 8-bit AdamW where the row says so (torchtune's table from
    "+8bit AdamW" down)."""
    from gpuprice.models.frameworks import DEFAULTS
    from gpuprice.models.throughput import optimizer_step_bytes

    defaults = DEFAULTS[framework]
    text = f"{_text(row, 'notes')} {_text(row, 'optimizer')}".lower()
    eight_bit = "8bit adamw" in text or "adamw8bit" in text or "+8bit" in text
    optimizer = "adamw8bit" if eight_bit else "adamw"
    stated = _benchmark_precision(_text(row, "precision"))
    precision = stated if stated == "bf16-true" else defaults.precision
    return optimizer_step_bytes(optimizer, defaults.adamw_step, precision, framework, sharding)


def _benchmark_shape(model: str, params_b: float | None) -> ModelShape:
    from gpuprice.models.architectures import find_model

    arch = find_model(model) if model else None
    if arch is not None:
        shape = ModelShape.of(arch)
        # Trust the catalog only when it is the same model as the row's parameter count says.
        if params_b is None or abs(shape.n_params / 1e9 - params_b) <= 0.15 * params_b:
            return shape
    nominal = _nominal_size_b(model)
    params_b = params_b if params_b is not None else nominal
    if params_b is None:
        raise BadInput(f"benchmark row: model {model!r} is not in the catalog and params_b is empty")
    return shape_from_size(params_b, nominal)


# torchtune's optimisation-flag table applies its techniques cumulatively top-down: "+compile"
# and every row below it ran compiled.
_COMPILED_CUMULATIVE = (
    "+compile",
    "+chunked ce",
    "+ac",
    "+opt in bwd",
    "+act offload",
    "+8bit adamw",
    "lora",
    "qlora",
)


def _compiled(notes: str) -> bool:
    text = notes.lower()
    marker = re.search(r"cumulative technique:\s*([^;]+)", text)
    if marker:
        return marker.group(1).strip() in _COMPILED_CUMULATIVE
    return bool(re.search(r"(?<!no )\bcompile\b|torch\.compile on", text))


def source_of(row: Mapping[str, object]) -> str:
    """A row's source: repository and file (or paper), without commit or section."""
    text = re.split(r"\s@|\s\(|;", _text(row, "source"))[0]
    return " ".join(text.split()[:2])


def source_family(row: Mapping[str, object]) -> str:
    """A row's source family: the repository (``owner/name``) or paper its source names first, so
    that a framework's or an organisation's tables leave the fit together (issue 33)."""
    text = _text(row, "source")
    return text.split()[0] if text else ""


def benchmark_case(row: Mapping[str, object]) -> BenchmarkCase:
    """Interpret one benchmark row (columns as in throughput_public.csv)."""
    gpus = int(row_number(row, "gpu_count") or 1)
    precision_text = _text(row, "precision")
    checkpoint_text = _text(row, "act_ckpt").lower()
    shape = _benchmark_shape(_text(row, "model"), row_number(row, "params_b"))
    attention = _text(row, "attention").lower()
    eager = attention.startswith("eager")
    precision = _benchmark_precision(precision_text)
    micro_batch = max(1, int(row_number(row, "micro_batch") or 1))
    heads = _attention_heads(_text(row, "model"), shape)
    masked, element, fp32_attn = (
        attention_inputs(
            _framework(row), attention, micro_batch, precision, heads, eager, _model_type(_text(row, "model"))
        )
        if attention in ATTENTIONS
        else (0.0, 2.0, False)
    )
    method = _benchmark_method(_text(row, "workload"), precision_text)
    checkpointing = checkpoint_text in ("true", "yes", "1", "full", "on")
    selective_flops = selective_attention = 0.0
    if checkpoint_text == "selective":
        if "selective layer" in _text(row, "notes").lower():
            selective_flops, selective_attention = shape.n_active_params, 0.5  # half of 2 N
        else:
            selective_flops = shape.selective_recompute_flops()
    sharding = _benchmark_sharding(_text(row, "sharding"), gpus)
    return BenchmarkCase(
        shape=shape,
        profile=benchmark_gpu(_text(row, "gpu")),
        method=method,
        gpus=gpus,
        seq_len=int(row_number(row, "seq_len") or 2048),
        micro_batch=micro_batch,
        checkpointing=checkpointing,
        compiled=_compiled(_text(row, "notes")),
        precision=precision,
        sharding=sharding,
        grad_accum=max(1, int(row_number(row, "grad_accum") or 1)),
        score_heads=heads if eager else 0.0,
        optimizer_bytes=_optimizer_bytes(row, _framework(row), sharding),
        masked_heads=masked,
        mask_bytes=element,
        fp32_attention=fp32_attn,
        adapter_bytes=_adapter_bytes(row, method, precision, checkpointing),
        stream_bytes=_stream_bytes(row, method, precision, checkpointing, gpus),
        fabric_gbps_per_gpu=benchmark_fabric(_text(row, "sharding")),
        selective_flops=selective_flops,
        selective_attention=selective_attention,
        unrouted_params=(
            shape.n_params - shape.n_active_params
            if runs_every_expert(_framework(row), _model_type(_text(row, "model")))
            else 0.0
        ),
    )


def cases_from_benchmarks(cases: Sequence[BenchmarkCase]) -> Cases:
    batch = cases_from_columns(
        shape=[c.shape for c in cases],
        profile=[c.profile for c in cases],
        method=np.array([c.method for c in cases], dtype=object),
        gpus=np.array([c.gpus for c in cases], dtype=float),
        seq_len=np.array([c.seq_len for c in cases], dtype=float),
        micro_batch=np.array([c.micro_batch for c in cases], dtype=float),
        checkpointing=np.array([c.checkpointing for c in cases]),
        compiled=np.array([c.compiled for c in cases]),
        precision=np.array([c.precision for c in cases], dtype=object),
        sharding=np.array([c.sharding for c in cases], dtype=object),
        fabric=[c.fabric_gbps_per_gpu for c in cases],
        grad_accum=np.array([c.grad_accum for c in cases], dtype=float),
        optimizer_bytes=np.array([c.optimizer_bytes for c in cases], dtype=float),
    )
    if any(c.score_heads for c in cases):
        batch.score_heads = np.array([c.score_heads for c in cases], dtype=float)
    batch.masked_heads = np.array([c.masked_heads for c in cases], dtype=float)
    batch.mask_bytes = np.array([c.mask_bytes for c in cases], dtype=float)
    batch.fp32_attention = np.array([c.fp32_attention for c in cases], dtype=bool)
    batch.adapter_bytes = np.array([c.adapter_bytes for c in cases], dtype=float)
    batch.stream_bytes = np.array([c.stream_bytes for c in cases], dtype=float)
    batch.selective_flops = np.array([c.selective_flops for c in cases], dtype=float)
    batch.selective_attention = np.array([c.selective_attention for c in cases], dtype=float)
    batch.unrouted_params = np.array([c.unrouted_params for c in cases], dtype=float)
    return batch


def predict_from_benchmark_row(
    row: Mapping[str, object], params: ThroughputParameters = CALIBRATED_PARAMETERS
) -> float:
    """Predicted tokens/s per GPU for one row in the format of throughput_public.csv."""
    return float(evaluate(cases_from_benchmarks([benchmark_case(row)]), params).tokens_per_sec_per_gpu[0])


def load_benchmark_rows(path: str) -> list[dict[str, object]]:
    """Rows of a benchmark CSV that report a per-GPU throughput (others cannot be scored)."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    rows: list[dict[str, object]] = [
        {str(k): v for k, v in r.items()} for r in table.to_dict(orient="records")
    ]
    return [r for r in rows if row_number(r, "tokens_per_sec_per_gpu")]
