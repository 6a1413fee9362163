"""Ad-hoc jobs: a workload from `gpuprice rank` JOB options, and limits that tighten a catalog workload.

The same fields and rules as ``workloads.yaml`` (:class:`~gpuprice.models.workload_model.Workload`);
errors name the command-line option (``--tokens 'x': ...``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuprice.errors import BadInput
from gpuprice.models.workload_model import Workload

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
