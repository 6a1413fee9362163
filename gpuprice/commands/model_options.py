"""Model and training options shared by ``gpuprice fit`` and ``gpuprice estimate``.

A command declares them all with :func:`with_model_options` (every option defaults to ``None`` so
a ``--batch`` CSV column can fill what the command line leaves out), then calls
:func:`setup_from_options`. ``--batch`` files go through ``run_batch`` (commands/batch.py); every error is a one-line
:class:`BadInput` naming the value, and for CSV files the file and line.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuprice.commands import metavars
from gpuprice.commands.output import write_json
from gpuprice.errors import BadInput, unknown_choice
from gpuprice.models.architectures import resolve_model
from gpuprice.models.choices import (
    ACTIVATION_CHECKPOINTING,
    ATTENTIONS,
    FRAMEWORKS,
    LORA_TARGETS,
    LOSS_KERNELS,
    MEMORY_METRICS,
    METHODS,
    OPTIMIZERS,
    PRECISIONS,
    SHARDINGS,
)
from gpuprice.models.fit_verdict import DEFAULT_MARGIN, check_margin
from gpuprice.models.memory import TrainingSetup


# ----- the model options ------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelOption:
    """One model/training option: its name (``_`` for ``-``, as in --batch CSV headers), the
    contract default that :func:`setup_from_options` applies, and its ``--help`` line."""

    name: str
    default: Any
    help: str
    # Numbers arrive as text (str) and are parsed by setup_from_options, so a bad value is a
    # one-line BadInput naming the option rather than a usage error from the argument parser.
    kind: type = str
    metavar: str = metavars.TEXT  # what --help shows for the value

    def annotation(self) -> Any:
        """The Typer parameter type of this option (an on/off pair for a bool)."""
        flag = "--" + self.name.replace("_", "-")
        if self.kind is bool:
            option = typer.Option(f"{flag}/--no-{flag[2:]}", help=self.help, show_default=False)
        else:
            option = typer.Option(flag, help=self.help, metavar=self.metavar)
        return Annotated[self.kind | None, option]


MODEL_OPTIONS: tuple[ModelOption, ...] = (
    ModelOption("model", None, "Catalog model (Hugging Face repo id), e.g. meta-llama/Llama-3.1-70B."),
    ModelOption("config", None, "A Hugging Face config.json.", Path, metavars.PATH),
    ModelOption(
        "params_b", None, "Model size in billions (representative dense shape).", metavar=metavars.FLOAT
    ),
    ModelOption("method", None, "Fine-tuning method (required).", metavar=metavars.choice(METHODS)),
    ModelOption("optimizer", "adamw", "Optimizer [adamw].", metavar=metavars.choice(OPTIMIZERS)),
    # None: the framework's training dtype (bf16-mixed for hf and torchtitan, bf16-true otherwise)
    ModelOption(
        "precision",
        None,
        "Precision [bf16-mixed; the framework's training dtype].",
        metavar=metavars.choice(PRECISIONS),
    ),
    ModelOption("seq_len", 2048, "Tokens per sequence [2048].", metavar=metavars.INTEGER),
    ModelOption("micro_batch", 1, "Sequences per GPU per step [1].", metavar=metavars.INTEGER),
    ModelOption(
        "grad_accum",
        1,
        "Micro-batches per optimizer step (gradient accumulation) [1].",
        metavar=metavars.INTEGER,
    ),
    # None: on for qlora (PEFT's recipe), off otherwise
    ModelOption(
        "grad_checkpointing", None, "Alias of --activation-checkpointing full [off; on for qlora].", bool
    ),
    ModelOption(
        "activation_checkpointing",
        None,
        "What backward recomputes: op-level selective or full [none; full for qlora].",
        metavar=metavars.choice(ACTIVATION_CHECKPOINTING),
    ),
    ModelOption(
        "framework", "hf", "Whose documented defaults apply [hf].", metavar=metavars.choice(FRAMEWORKS)
    ),
    ModelOption("compile", None, "torch.compile: fused elementwise kernels [off].", bool),
    ModelOption(
        "loss", None, "Cross-entropy kernel [the framework's].", metavar=metavars.choice(LOSS_KERNELS)
    ),
    ModelOption(
        "attention",
        None,
        "Attention kernel; eager keeps seq x seq scores [the model's and framework's default].",
        metavar=metavars.choice(ATTENTIONS),
    ),
    ModelOption("cpu_offload_activations", None, "Offload saved activations to CPU RAM [off].", bool),
    # None: the framework's data path (hf pads each batch to its own longest sample)
    ModelOption(
        "packed",
        None,
        "Every batch one length (packed, or padded to --seq-len): no cached earlier loss region "
        "[off for hf, on for the others].",
        bool,
    ),
    ModelOption(
        "logits_kept",
        None,
        "The training loop keeps the model's output (its logits) referenced through backward [off].",
        bool,
    ),
    ModelOption("optimizer_in_backward", None, "Optimizer step fused into backward [off].", bool),
    ModelOption(
        "built_before_zero_init",
        None,
        "DeepSpeed ZeRO-3 (hf, --gpus > 1): the model was built before zero.Init ran (from_pretrained "
        "before TrainingArguments), so torch's linear keeps every gathered weight until backward [off].",
        bool,
    ),
    ModelOption(
        "non_reentrant_checkpointing",
        None,
        "hf LoRA/QLoRA under FSDP: checkpointing is non-reentrant (use_reentrant=False) or applied inside "
        "FSDP's units (fsdp_config activation_checkpointing), so FSDP keeps no recomputed block inputs "
        "[off: transformers' reentrant default].",
        bool,
    ),
    ModelOption(
        "memory_metric",
        "device",
        "What per_gpu_gb counts (fits judges device) [device].",
        metavar=metavars.choice(MEMORY_METRICS),
    ),
    ModelOption("lora_rank", 16, "LoRA rank [16].", metavar=metavars.INTEGER),
    ModelOption(
        "lora_targets",
        "all",
        "LoRA target modules: all linears, q+v, or q,k,v,o [all].",
        metavar=metavars.choice(LORA_TARGETS),
    ),
    ModelOption("gpus", 1, "GPUs in the job [1].", metavar=metavars.INTEGER),
    ModelOption(
        "sharding", "none", "Sharding of states over GPUs [none].", metavar=metavars.choice(SHARDINGS)
    ),
    ModelOption(
        "margin",
        0.20,
        "Fraction of the card kept free, 0-0.9 (0: the peak alone) [0.20].",
        metavar=metavars.FLOAT,
    ),
)
# Option name -> contract default.
MODEL_OPTION_DEFAULTS: dict[str, Any] = {option.name: option.default for option in MODEL_OPTIONS}
MODEL_OPTION_NAMES: tuple[str, ...] = tuple(MODEL_OPTION_DEFAULTS)

# ----- the other options both commands declare (Typer aliases for a command signature) -------------
GpuOpt = Annotated[str | None, typer.Option("--gpu", help="GPU slug, e.g. h100-sxm.", metavar="SLUG")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
BatchOpt = Annotated[
    Path | None,
    typer.Option("--batch", help="CSV, one run per row; JSON lines out in row order.", metavar=metavars.PATH),
]


def with_model_options(command: Callable[..., None] | None = None, *, exclude: Iterable[str] = ()) -> Any:
    """Declare every model option on a Typer command, ahead of the command's own options.

    ``command`` takes ``options`` first: a dict of the model options' values by name (``None``
    where not given), ready for :func:`setup_from_options` or :func:`run_batch`. Used bare
    (``@with_model_options``) or with ``exclude`` naming options the command decides itself
    (``@with_model_options(exclude=("gpus", "sharding"))``); those are left out of ``options``."""
    if command is None:
        return functools.partial(with_model_options, exclude=tuple(exclude))
    skipped = set(exclude)
    declared_options = [o for o in MODEL_OPTIONS if o.name not in skipped]
    own = list(inspect.signature(command, eval_str=True).parameters.values())
    if not own or own[0].name != "options":
        raise TypeError(f"{command.__name__}: the first parameter must be 'options'")
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [
        inspect.Parameter(o.name, keyword, default=None, annotation=o.annotation()) for o in declared_options
    ]
    params += [p.replace(kind=keyword) for p in own[1:]]

    @functools.wraps(command)
    def declared(**values: Any) -> None:
        options = {o.name: values.pop(o.name) for o in declared_options}
        command(options, **values)

    # Typer reads the parameters from the signature (it stops at __signature__, not __wrapped__).
    declared.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    declared.__annotations__ = {p.name: p.annotation for p in params}
    return declared


def setup_echo(setup: TrainingSetup, gpu: str | None = None) -> dict[str, Any]:
    """The setup as a command result repeats it, with the GPU (when the command names one) next
    to the GPU count."""
    return {
        "model": setup.arch.name,
        "method": setup.method,
        "optimizer": setup.optimizer,
        "precision": setup.precision,
        "seq_len": setup.seq_len,
        "micro_batch": setup.micro_batch,
        "grad_checkpointing": setup.grad_checkpointing,
        "activation_checkpointing": setup.activation_checkpointing,
        "framework": setup.framework,
        "compile": setup.compile,
        "loss": setup.loss,
        "attention": setup.attention,
        "packed": not setup.variable_lengths,
        "logits_kept": setup.logits_kept,
        "built_before_zero_init": setup.built_before_zero_init,
        "non_reentrant_checkpointing": not setup.reentrant_checkpointing,
        **({"gpu": gpu} if gpu is not None else {}),
        "gpus": setup.gpus,
        "sharding": setup.sharding,
    }


def sequence_text(result: Mapping[str, Any]) -> str:
    """The "seq 2048 x micro-batch 1, grad checkpointing" part of a result's setup, for people."""
    mode = result.get("activation_checkpointing", "full" if result["grad_checkpointing"] else "none")
    checkpointing = {"none": "", "selective": ", selective recompute", "full": ", grad checkpointing"}[mode]
    return f"seq {result['seq_len']} x micro-batch {result['micro_batch']}{checkpointing}"


def print_result(result: dict[str, Any], json_out: bool, show: Callable[[dict[str, Any]], None]) -> None:
    """One command result: indented JSON with ``--json``, else ``show`` renders it for people."""
    if json_out:
        write_json(result)
    else:
        show(result)


_CHOICES: dict[str, tuple[str, ...]] = {
    "method": METHODS,
    "optimizer": OPTIMIZERS,
    "precision": PRECISIONS,
    "lora_targets": LORA_TARGETS,
    "sharding": SHARDINGS,
    "activation_checkpointing": ACTIVATION_CHECKPOINTING,
    "framework": FRAMEWORKS,
    "loss": LOSS_KERNELS,
    "memory_metric": MEMORY_METRICS,
    "attention": ATTENTIONS,
}
_BOOLS = (
    "grad_checkpointing",
    "compile",
    "cpu_offload_activations",
    "optimizer_in_backward",
    "packed",
    "logits_kept",
    "built_before_zero_init",
    "non_reentrant_checkpointing",
)
_INTS = ("seq_len", "micro_batch", "grad_accum", "lora_rank", "gpus")
_FLOATS = ("params_b", "margin")
_TRUE = {"true", "1", "yes", "y", "on"}
_FALSE = {"false", "0", "no", "n", "off"}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _choice(name: str, value: str) -> str:
    text = value.strip().lower()
    if text not in _CHOICES[name]:
        error = unknown_choice(_flag(name).lstrip("-"), value, _CHOICES[name])
        if "valid:" not in str(error):  # short lists: always show every choice
            error = BadInput(f"{error} (valid: {', '.join(_CHOICES[name])})")
        raise error
    return text


def setup_from_options(**options: Any) -> TrainingSetup:
    """A validated TrainingSetup from option values (``None`` = the contract default).

    Keys are the option names with ``_`` for ``-`` (:data:`MODEL_OPTION_NAMES`); exactly one of
    model, config, params_b must be given, and method is required."""
    unknown = set(options) - set(MODEL_OPTION_NAMES)
    if unknown:
        raise BadInput(f"unknown option {sorted(unknown)[0]!r}; valid: {', '.join(MODEL_OPTION_NAMES)}")
    values = {
        k: (options.get(k) if options.get(k) is not None else d) for k, d in MODEL_OPTION_DEFAULTS.items()
    }
    for name in (*_INTS, *_FLOATS, *_BOOLS):
        text = values[name]
        if isinstance(text, str):
            values[name] = parse_cell(name, text, label=_flag(name))
    if values["method"] is None:
        raise BadInput("--method is required: full, lora or qlora")
    for name in _CHOICES:
        if values[name] is not None:  # None: the framework's or the method's default
            values[name] = _choice(name, str(values[name]))
    params_b = values["params_b"]
    if params_b is not None and (not math.isfinite(float(params_b)) or float(params_b) <= 0):
        raise BadInput(f"--params-b {params_b} must be a positive number of billions")
    values["margin"] = check_margin(
        float(values["margin"] if values["margin"] is not None else DEFAULT_MARGIN)
    )
    arch = resolve_model(values["model"], values["config"], params_b)
    return TrainingSetup.checked(
        arch=arch,
        method=values["method"],
        optimizer=values["optimizer"],
        precision=values["precision"],
        seq_len=values["seq_len"],
        micro_batch=values["micro_batch"],
        grad_accum=values["grad_accum"],
        grad_checkpointing=values["grad_checkpointing"],
        activation_checkpointing=values["activation_checkpointing"],
        framework=values["framework"],
        compile=bool(values["compile"]),
        loss=values["loss"],
        attention=values["attention"],
        cpu_offload_activations=bool(values["cpu_offload_activations"]),
        optimizer_in_backward=bool(values["optimizer_in_backward"]),
        variable_lengths=None if values["packed"] is None else not values["packed"],
        logits_kept=bool(values["logits_kept"]),
        built_before_zero_init=bool(values["built_before_zero_init"]),
        reentrant_checkpointing=not values["non_reentrant_checkpointing"],
        memory_metric=values["memory_metric"],
        lora_rank=values["lora_rank"],
        lora_targets=values["lora_targets"],
        gpus=values["gpus"],
        sharding=values["sharding"],
        margin=values["margin"],
    )


def parse_cell(name: str, value: str, label: str | None = None) -> Any:
    """A CSV cell (or option text) as the option's type (int, float, bool or str)."""
    label = label or name
    if name in _INTS:
        try:
            number = float(value.strip().replace("_", ""))
        except ValueError:
            raise BadInput(f"{label} {value!r} is not an integer") from None
        if not math.isfinite(number) or number != int(number):
            raise BadInput(f"{label} {value!r} is not an integer")
        return int(number)
    if name in _FLOATS:
        try:
            number = float(value.strip())
        except ValueError:
            raise BadInput(f"{label} {value!r} is not a number") from None
        if not math.isfinite(number):
            raise BadInput(f"{label} {value!r} is not a finite number")
        return number
    if name in _BOOLS:
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise BadInput(f"{label} {value!r} is not a boolean (true/false)")
    return value
