"""Measured-memory rows (``measured_memory_public.csv`` format) -> :class:`TrainingSetup`.

Calibration tooling only: the product estimates with :mod:`gpuprice.models.memory`. Slightly over
~400 lines: each source's way of stating a run (precision strings, notes, metrics) is read here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuprice.errors import BadInput
from gpuprice.models.architectures import ModelArch, find_model, shape_for_params
from gpuprice.models.calibration.lora_notes import stated_lora_targets
from gpuprice.models.choices import METHODS, LoraTargets
from gpuprice.models.hf_config import arch_from_config_file
from gpuprice.models.memory import TrainingSetup, one_line_error


# ----- measured rows -> setups -------------------------------------------------------------------
class UnusableRow(ValueError):
    """A measurement row that lacks an input the model needs (or uses a method it does not model)."""


_TRUE = {"true", "yes", "on", "full", "1"}
_FALSE = {"false", "no", "off", "0", "none"}


def _parse_int(value: Any, name: str) -> int:
    """A leading integer ("2048", "2,048", "4 (GA 8)", "8k" = 8192); anything else is unusable."""
    text = str(value if value is not None else "").strip().lower().replace(",", "").replace("_", "")
    match = re.match(r"^(\d+(?:\.\d+)?)\s*(k\b)?", text)
    if not match:
        raise UnusableRow(f"{name} {value!r} is not a number")
    number = float(match.group(1)) * (1024 if match.group(2) else 1)
    if not math.isfinite(number) or number != int(number):
        raise UnusableRow(f"{name} {value!r} is not an integer")
    return int(number)


def _parse_checkpointing(value: Any, sharding: str) -> str:
    """none / selective / full from the row's grad_checkpointing text."""
    text = str(value if value is not None else "").strip().lower()
    if text.startswith("selective") or "selective" in text:
        return "selective"
    if (
        text in _TRUE
        or text.startswith(("true", "on", "yes", "full"))
        or "typically on" in text
        or "likely on" in text
    ):
        return "full"
    if text in _FALSE or text.startswith(("false", "off", "no")):
        return "none"
    # Unstated: frameworks wrap blocks with activation checkpointing when they shard with
    # FSDP/ZeRO-3 (litgpt, torchtune); single-device scripts leave it off.
    return "full" if sharding in ("zero3", "fsdp", "offload") else "none"


# Which framework produced a source's numbers (the repository the measurement comes from);
# anything else ran on transformers (HF Trainer, PEFT, DeepSpeed, Answer.AI's train.py, ...).
_FRAMEWORK_OF_SOURCE = (
    ("lightning-ai/litgpt", "litgpt"),
    ("lightning-ai/lit-gpt", "litgpt"),
    ("pytorch/torchtune", "torchtune"),
    ("pytorch/torchtitan", "torchtitan"),
)
# torchtune's cumulative optimisation table ("techniques applied cumulatively top-down"), in its
# order: each "+X" row also has every technique above it.
_CUMULATIVE_ORDER = (
    "packed",
    "compile",
    "chunked",
    "checkpointing",
    "optimizer_in_backward",
    "offload",
    "adam8bit",
)
_TECHNIQUE_WORDS = (
    ("compile", r"\bcompile\b"),
    ("chunked", r"chunked (?:cross-entropy|ce)\b"),
    ("checkpointing", r"activation checkpointing|\bac\b"),
    ("optimizer_in_backward", r"fused into backward|fused optimizer|opt(?:imizer)? in bwd"),
    ("offload", r"activation offloading|act(?:ivation)? offload"),
)


# torchtune's README at this commit (2024-05) predates CEWithChunkedOutputLoss (torchtune PR #1390,
# 2024-08): its recipes computed the loss on the whole fp32 logits.
_PRE_CHUNKED_TORCHTUNE = "@cb8e65a39c4"


# Lit-GPT's finetune scripts wrap every Block with activation checkpointing whenever they shard:
# ``FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block}, ...)`` for
# ``devices > 1`` (``finetune/lora.py`` @064fd52 and later, ``litgpt/finetune/*.py``), whatever
# the row's own grad_checkpointing column assumed.
_LITGPT_SHARDED_CHECKPOINTING = "full"
# Longest Alpaca training example per tokenizer, as litgpt's ``tutorials/resource-tables.md``
# states ("the number of tokens in the longest training example differs based on the model:
# phi1.5: 1044 tokens, StableLM Alpha: 1034 tokens, Llama 2: 1304 tokens, Falcon 1079 tokens").
# Lit-GPT's ``get_batch`` puts that example into the first micro-batch and pads the batch to it, so
# it sets the peak of a run on the default Alpaca data (``tutorials/finetune_lora.md`` rows).
_ALPACA_LONGEST = (("stablelm", 1034), ("phi-1.5", 1044), ("llama-2", 1304), ("falcon", 1079))
# LoRA settings of litgpt's ``config_hub/finetune/<model>/<method>.yaml`` where they differ from
# the r=32 q,v the README table's notes assume: the Gemma configs set lora_query, lora_key,
# lora_value, lora_projection, lora_mlp and lora_head all true (lora_r 8 for gemma-2b/lora, 16
# for gemma-2b/qlora and gemma-7b/qlora and /lora).
_LITGPT_CONFIG_LORA = {
    "gemma-2b/lora": (8, "all"),
    "gemma-2b/qlora": (16, "all"),
    "gemma-7b/lora": (16, "all"),
    "gemma-7b/qlora": (16, "all"),
}


def _litgpt_corrections(row: Mapping[str, Any], notes: str) -> dict[str, Any]:
    """Inputs litgpt's own scripts, configs and docs state that the row's columns miss."""
    source = str(row.get("source_url_or_repo_path", "") or "")
    out: dict[str, Any] = {}
    config = re.search(r"config ([\w.-]+/\w+)", notes)
    if config and config.group(1).lower() in _LITGPT_CONFIG_LORA:
        out["lora"] = _LITGPT_CONFIG_LORA[config.group(1).lower()]
    # lit-gpt's RMSNorm gained its fp32 upcast at 6178c7cc (2023-10-24, "Half precision fixes"):
    # the resource tables (measured at 8641822, 2023-10-20) and finetune_lora.md predate it
    if "tutorials/resource-tables.md" in source or "tutorials/finetune_lora.md" in source:
        out["norm_upcasts"] = False
    if "tutorials/finetune_lora.md" in source:
        name = str(row.get("model", "")).lower()
        for prefix, longest in _ALPACA_LONGEST:
            if name.startswith(prefix):
                out["seq_len"] = longest
    return out


# Sources whose training script gives every batch one shape: QwenLM/Qwen's finetune.py
# ``preprocess()`` pads every example to ``model_max_length`` (``input_id += [pad] * (max_len -
# len(input_id))``, @00dceebb), so its README's runs have no variable-length allocator gap.
_FIXED_SHAPE_SOURCES = ("qwenlm/qwen readme",)


def _variable_lengths(row: Mapping[str, Any], notes: str) -> bool | None:
    """False where the source pads to one length or packs; None: the framework's data path."""
    source = str(row.get("source_url_or_repo_path", "") or "").lower()
    if source.startswith(_FIXED_SHAPE_SOURCES) or re.search(
        r"\bpacked\b|packing|pad(ded)? to max|dummy data|synthetic data", notes.lower()
    ):
        return False
    return None


def framework_of(row: Mapping[str, Any]) -> str:
    source = str(row.get("source_url_or_repo_path", "") or "").lower()
    for prefix, framework in _FRAMEWORK_OF_SOURCE:
        if source.startswith(prefix):
            return framework
    return "hf"


def techniques_of(notes: str, previous: frozenset[str] = frozenset()) -> frozenset[str]:
    """Optimisations a row's notes name (compile, chunked, checkpointing, optimizer_in_backward,
    offload). A cumulative table's "+X" row inherits every technique above X; "(same)" repeats
    ``previous`` (the techniques of the row above it in the same source)."""
    text = notes.lower()
    found = {
        name for name, pattern in _TECHNIQUE_WORDS if re.search(r"(?<!no )(?<!no torch\.)" + pattern, text)
    }
    cumulative = "applied cumulatively" in text
    marker = re.search(r"row:\s*(.*)$", text)
    if cumulative and marker:
        row_text = marker.group(1)
        if "(same)" in row_text:
            return previous
        if "(" in row_text:  # an explicit list
            return frozenset(name for name, pattern in _TECHNIQUE_WORDS if re.search(pattern, row_text))
        named = [
            name
            for name, pattern in (*_TECHNIQUE_WORDS, ("packed", r"packed"), ("adam8bit", r"8-bit adamw"))
            if re.search(pattern, row_text)
        ]
        if named and named[0] in _CUMULATIVE_ORDER:
            return frozenset(_CUMULATIVE_ORDER[: _CUMULATIVE_ORDER.index(named[0]) + 1]) - {
                "packed",
                "adam8bit",
            }
        return frozenset()
    if "torch.compile on" in text:
        found.add("compile")
    return frozenset(found)


# What a source states about micro-batches per optimizer step: "no grad accumulation" (1),
# "GA 8", "gradient_accumulation_steps 1". Unstated: 1, the CLI's default (HF Trainer's).
_NO_ACCUMULATION = re.compile(r"no grad(?:ient)?[ _]accum", re.IGNORECASE)
_GRAD_ACCUM = re.compile(
    r"grad(?:ient)?[ _]accumulation(?:[ _](?:steps|iters))?\s*[=:]?\s*(\d+)\b|\bGA\s*=?\s*(\d+)\b",
    re.IGNORECASE,
)


def _grad_accum(notes: str) -> int:
    """Micro-batches per optimizer step as the row's source states it (1 when unstated)."""
    if _NO_ACCUMULATION.search(notes):
        return 1
    found = _GRAD_ACCUM.search(notes)
    return int(found.group(1) or found.group(2)) if found else 1


def _parse_sharding(value: Any) -> str:
    text = str(value if value is not None else "").strip().lower()
    tokens = [t for t in re.split(r"[^a-z0-9]+", text) if t]
    if any(re.fullmatch(r"(tp|pp|cp)\d*", t) for t in tokens) or any(
        word in text for word in ("megatron", "tensor parallel", "pipeline")
    ):
        raise UnusableRow(f"sharding {value!r}: tensor/pipeline parallelism is not modelled")
    if "offload" in text:
        return "offload"
    if not tokens or text in ("none", "ddp", "dp", "single", "no_shard", "no shard", "n/a", "-"):
        return "none"
    squashed = re.sub(r"[^a-z0-9]", "", text)
    stage = re.search(r"zero(?:stage)?([123])", squashed)
    if stage:  # ZeRO-1 shards optimizer state only: closest modelled tier is ZeRO-2
        return {"1": "zero2", "2": "zero2", "3": "zero3"}[stage.group(1)]
    if "shardgradop" in squashed:
        return "zero2"
    if "fsdp" in squashed or "fullshard" in squashed or "hybridshard" in squashed:
        return "fsdp"
    if squashed in ("ddp", "dataparallel", "distributeddataparallel"):
        return "none"
    raise UnusableRow(f"sharding {value!r} is not modelled")


def _parse_method(method: Any, precision_text: str, sharding: str) -> tuple[str, str, str]:
    """(method, optimizer, precision) from the row's method and precision strings."""
    m = str(method if method is not None else "").strip().lower()
    p = precision_text.strip().lower()
    if re.search(r"dora|adapter|prefix|prompt|ia3|lora_emb|lora\+emb|embedding", m):
        raise UnusableRow(f"method {method!r} is not modelled ({', '.join(METHODS)})")
    if "qlora" in m or "q-lora" in m:
        kind = "qlora"
    elif "lora" in m:
        kind = "lora"
    elif m.startswith(("full", "pretrain", "sft", "ft", "fine")):
        kind = "full"
    else:
        raise UnusableRow(f"method {method!r} is not modelled ({', '.join(METHODS)})")
    if "8bit" in m or "8-bit" in m or "adam8" in m:
        optimizer = "paged_adamw8bit" if "paged" in m else "adamw8bit"
    elif "sgd" in m:
        optimizer = "sgd"
    elif "paged" in m:  # bitsandbytes' 32-bit PagedAdamW (torchtune README: "Uses PagedAdamW")
        optimizer = "paged_adamw"
    else:
        optimizer = "adamw"
    if not p or p.startswith(("unknown", "?", "n/a", "likely")):
        raise UnusableRow(f"precision {precision_text!r} is unknown")
    if re.search(r"(?<![a-z0-9])(bf16|16)-true|no amp|pure", p):
        precision = "bf16-true"
    elif re.search(r"(?<![a-z0-9])(bf16|fp16|16)-mixed", p):
        # Lightning's flag: the module stays fp32 under 16-bit autocast. Full fine-tuning and QLoRA
        # (4-bit base, fp32 non-quantized layers) match bf16-mixed here; LoRA keeps an fp32 frozen
        # base (plus the bf16 copies autocast saves), which the fp32 regime accounts for.
        precision = "fp32" if kind == "lora" else "bf16-mixed"
    elif re.match(r"(fp32|float32|32-true|32\b|tf32)", p):
        precision = "fp32"
    elif "gptq" in p or "awq" in p:
        # GPTQ/AWQ bases: PEFT's prepare_model_for_kbit_training does not upcast their
        # non-quantized layers to fp32, so the 16-bit regime is the closest.
        precision = "bf16-true"
    elif "mixed" in p or re.search(r"\bamp\b", p):
        precision = "bf16-mixed"
    elif p.startswith(("bf16", "fp16", "float16", "bfloat16", "16")):
        # Plain "bf16": autocast runs (HF Trainer bf16=True, DeepSpeed bf16, fp16 with loss
        # scaling) are mixed - fp32 adapters/master/states on a 16-bit base; otherwise pure bf16
        # (torchtune, litgpt bf16-true, Answer.AI) with states in bf16.
        amp = any(word in p for word in ("trainer", "deepspeed", "fp16")) or sharding in ("zero2", "zero3")
        precision = "bf16-mixed" if amp and "bf16_" not in m else "bf16-true"
    else:
        raise UnusableRow(f"precision {precision_text!r} is unknown")
    return kind, optimizer, precision


def _parse_lora(notes: str) -> tuple[int, LoraTargets]:
    """LoRA rank and targets from free-text notes; unstated -> r=8 on q,v (PEFT/litgpt/torchtune default)."""
    text = notes.lower()
    rank_match = re.search(r"\br\s*=\s*(\d+)", text) or re.search(r"rank\s*(\d+)", text)
    rank = int(rank_match.group(1)) if rank_match else 8
    return rank, stated_lora_targets(text) or "qv"


def _parse_attention(row: Mapping[str, Any], notes: str) -> str | None:
    """The row's attention kernel: its ``attention`` column, "eager attention" in the notes, or
    None (the model's and framework's default)."""
    stated = str(row.get("attention", "") or "").strip().lower()
    if stated:
        return stated
    return "eager" if re.search(r"eager attention|attn_implementation[ =]+eager", notes.lower()) else None


def _parse_metric(metric: Any) -> str:
    text = str(metric).strip().lower()
    if "allocated" in text or "memory active" in text:
        return "allocated"
    if "reserved" in text:
        return "reserved"
    return "device"


def _row_arch(row: Mapping[str, Any]) -> ModelArch:
    """The row's model: its ``config`` (a config.json the reader resolved to a path, the contract's
    ``--config``) when the row names one, else the catalog entry of its name when its size agrees
    with ``params_b`` (names collide across sizes), else a representative dense shape of
    ``params_b``."""
    config = str(row.get("config", "") or "").strip()
    if config:
        try:
            return arch_from_config_file(Path(config))
        except BadInput as exc:
            raise UnusableRow(str(exc)) from None
    name = str(row.get("model", "") or "").strip()
    try:
        params_b: float | None = float(row.get("params_b", ""))
    except (TypeError, ValueError):
        params_b = None
    if params_b is not None and not (math.isfinite(params_b) and params_b > 0):
        params_b = None
    arch = find_model(name) if name else None
    # A catalog hit must be the same model the row's size describes (names collide across sizes).
    if arch is not None and params_b is not None and abs(arch.n_params / 1e9 / params_b - 1) > 0.15:
        arch = None
    if arch is None:
        if params_b is None:
            raise UnusableRow(f"unknown model {name!r} and no params_b")
        try:
            arch = shape_for_params(params_b)
        except BadInput as exc:
            raise UnusableRow(str(exc)) from None
    return arch


# Answer.AI's benchmarks ran its own loop, ``train.py`` (AnswerDotAI/fsdp_qlora @05ed9f2a): the
# benchmark commands pass no --lora_rank / --lora_target_modules, so its defaults hold
# (``lora_rank: int = 64``; ``lora_target_modules="all"`` -> ["k_proj", "q_proj", "v_proj",
# "up_proj", "down_proj", "gate_proj"]: every block linear but o_proj, closest to "all"). The loop
# keeps ``output = model(...)`` referenced through ``loss.backward()`` and ``optimizer.step()``
# ("# Delete the output so more memory frees up before the next forward pass / output = None"
# comes after both), so the logits transformers returns with labels stay alive: the fp32 upcast,
# ``logits = logits.float()`` before the loss, in the releases of that time (transformers
# ``MistralForCausalLM.forward`` @005a187e returns that upcast tensor in CausalLMOutputWithPast).
_ANSWER_AI_TRAIN_PY = "answerdotai/fsdp_qlora"
_ANSWER_AI_LORA: tuple[int, LoraTargets] = (64, "all")


def _row_loss(row: Mapping[str, Any], framework: str, techniques: Collection[str], notes: str) -> str | None:
    """The loss kernel the row used: the row's ``loss`` column where the source's code says how the
    loss is computed (universal-llm-trainer: ``full-16bit``); chunked when the notes say so;
    torchtune's cumulative table (and its README before 2024-08) ran the whole fp32 loss; None
    leaves the framework default."""
    stated = str(row.get("loss", "") or "").strip().lower()
    if stated:
        return stated
    loss = "chunked" if "chunked" in techniques else None
    if framework == "torchtune" and (
        "applied cumulatively" in notes.lower()
        or _PRE_CHUNKED_TORCHTUNE in str(row.get("source_url_or_repo_path", ""))
    ):
        loss = loss or "full"  # the table's rows above "+chunked cross-entropy"; pre-2024-08 README
    return loss


_BUILT_BEFORE_ZERO_INIT = re.compile(r"\bno zero\.init\b", re.IGNORECASE)


def setup_from_measurement_row(
    row: Mapping[str, Any], previous_techniques: frozenset[str] = frozenset()
) -> TrainingSetup:
    """Map a ``measured_memory_public.csv`` row (model, params_b, method, precision, seq_len,
    micro_batch, grad_checkpointing, num_gpus, sharding, notes, memory_metric) to a setup.

    Unknown model names fall back to a representative dense shape of ``params_b``. Raises
    :class:`UnusableRow` when an input is missing or the method/parallelism is not modelled.
    The framework comes from the source (:func:`framework_of`), the optimisations from the notes
    (:func:`techniques_of`; ``previous_techniques`` for a cumulative table's "(same)" rows)."""
    arch = _row_arch(row)
    sharding = _parse_sharding(row.get("sharding", "none"))
    precision_text = str(row.get("precision", ""))
    method, optimizer, precision = _parse_method(row.get("method", ""), precision_text, sharding)
    notes = str(row.get("notes", "") or "")
    rank, targets = _parse_lora(notes)
    gpus = _parse_int(row.get("num_gpus", 1), "num_gpus")
    dq = (
        "-dq" in precision_text.lower()
        or "double" in precision_text.lower()
        or "gptq" in precision_text.lower()
    )
    framework = framework_of(row)
    techniques = techniques_of(notes, previous_techniques)
    checkpointing = _parse_checkpointing(row.get("grad_checkpointing", ""), sharding)
    if "checkpointing" in techniques and checkpointing == "none":
        checkpointing = "full"
    seq_len = _parse_int(row.get("seq_len"), "seq_len")
    norm_upcasts = True
    if framework == "litgpt":
        fixes = _litgpt_corrections(row, notes)
        rank, targets = fixes.get("lora", (rank, targets))
        seq_len = fixes.get("seq_len", seq_len)
        norm_upcasts = fixes.get("norm_upcasts", True)
        if gpus > 1 and sharding in ("fsdp", "zero3"):
            checkpointing = _LITGPT_SHARDED_CHECKPOINTING
    answer_ai = _ANSWER_AI_TRAIN_PY in str(row.get("source_url_or_repo_path", "")).lower()
    if answer_ai:
        rank, targets = _ANSWER_AI_LORA
    loss = _row_loss(row, framework, techniques, notes)
    try:
        return TrainingSetup.model_validate(
            {
                "arch": arch,
                "framework": framework,
                "compile": "compile" in techniques,
                "loss": loss,
                "cpu_offload_activations": "offload" in techniques,
                "optimizer_in_backward": "optimizer_in_backward" in techniques,
                "grad_accum": _grad_accum(notes),
                "activation_checkpointing": checkpointing,
                "method": method,
                "optimizer": optimizer,
                "precision": precision,
                "seq_len": seq_len,
                "micro_batch": _parse_int(row.get("micro_batch"), "micro_batch"),
                "lora_rank": min(rank, arch.hidden_size),
                "lora_targets": targets,
                "gpus": gpus,
                "sharding": sharding,
                "qlora_double_quant": dq,
                "memory_metric": _parse_metric(row.get("memory_metric", "")),
                "attention": _parse_attention(row, notes),
                "variable_lengths": _variable_lengths(row, notes),
                "logits_kept": answer_ai,
                # gpjt/fine-tune-2024-04's scripts state it: "no zero.Init: the model is built
                # before TrainingArguments"
                "built_before_zero_init": bool(_BUILT_BEFORE_ZERO_INIT.search(notes)),
                # train.py applies torch's apply_activation_checkpointing after FSDP wrapping: the
                # checkpoint runs inside each unit, so FSDP hooks the real inputs, not the recompute's
                "reentrant_checkpointing": not answer_ai,
                "norm_upcasts": norm_upcasts,
            }
        )
    except ValidationError as exc:
        raise UnusableRow(one_line_error(exc)) from None
