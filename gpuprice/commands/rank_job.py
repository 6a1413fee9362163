"""The JOB options of ``gpuprice rank`` and the choice between a catalog workload and a job.

Exists because rank takes a job in two ways (``--workload NAME`` with limits, or the model options
plus ``--tokens`` and limits) and both must become the same Workload with the same one-line errors.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuprice.commands import metavars
from gpuprice.commands.validation import parse_choices, parse_providers
from gpuprice.errors import BadInput
from gpuprice.models.workloads import JOB_FIELDS, LIMIT_FIELDS, Workload
from gpuprice.quantities import parse_number

# rank chooses the GPU count and sharding per offer itself.
RANK_DECIDES = ("gpus", "sharding")


def _whole(option: str, text: str | None) -> int | None:
    if text is None:
        return None
    value = parse_number(option, text)
    assert value is not None
    if value != int(value) or value < 1:
        raise BadInput(f"{option} {text!r} must be a whole number of at least 1")
    return int(value)


def _positive(option: str, text: str | None, *, suffixes: bool = False) -> float | None:
    value = parse_number(option, text, suffixes=suffixes)
    if value is not None and value <= 0:
        raise BadInput(f"{option} {text!r} must be a positive number")
    return value


JOB_METAVARS = {
    "tokens": metavars.TOKENS,
    "checkpoint_interval_tokens": metavars.TOKENS,
    "checkpoint_interval_hours": metavars.FLOAT,
    "deadline_hours": metavars.FLOAT,
    "max_gpus": metavars.INTEGER,
    "max_nodes": metavars.INTEGER,
    "budget_usd": metavars.FLOAT,
    "tier": "on_demand,spot,reserved",
    "providers": "P1,P2",
}
JOB_HELP = {
    "tokens": "JOB: training tokens, e.g. 1e9, 500M, 2B (K/M/B/T).",
    "checkpoint_interval_tokens": "JOB: tokens between checkpoints [a tenth of --tokens].",
    "checkpoint_interval_hours": "JOB: checkpoint on the wall clock every H hours instead.",
    "deadline_hours": "Exclude offers whose expected wall time exceeds H hours.",
    "max_gpus": "Exclude configurations of more than N GPUs.",
    "max_nodes": "Most 8-GPU nodes the job may span (JOB default 1).",
    "budget_usd": "Exclude offers whose total run cost exceeds X USD.",
    "tier": "Only these tiers: on_demand,spot,reserved [all].",
    "providers": "Only these providers, comma-separated [all].",
}


def _parse_job_values(values: dict[str, str | None]) -> dict[str, Any]:
    from gpuprice.scrapers.offer import TIERS

    return {
        "tokens": _positive("--tokens", values["tokens"], suffixes=True),
        "checkpoint_interval_tokens": _positive(
            "--checkpoint-interval-tokens", values["checkpoint_interval_tokens"], suffixes=True
        ),
        "checkpoint_interval_hours": _positive(
            "--checkpoint-interval-hours", values["checkpoint_interval_hours"]
        ),
        "deadline_hours": _positive("--deadline-hours", values["deadline_hours"]),
        "max_gpus": _whole("--max-gpus", values["max_gpus"]),
        "max_nodes": _whole("--max-nodes", values["max_nodes"]),
        "budget_usd": _positive("--budget-usd", values["budget_usd"]),
        "tier": parse_choices("--tier", values["tier"], TIERS),
        "providers": parse_providers(values["providers"]) if values["providers"] is not None else None,
    }


def with_job_options(command: Callable[..., None]) -> Callable[..., None]:
    """Declare the JOB_FIELDS as text options (``job`` dict, parsed) after ``options``."""
    own = list(inspect.signature(command, eval_str=True).parameters.values())
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [own[0]] + [
        inspect.Parameter(
            name,
            keyword,
            default=None,
            annotation=Annotated[
                str | None,
                typer.Option("--" + name.replace("_", "-"), help=JOB_HELP[name], metavar=JOB_METAVARS[name]),
            ],
        )
        for name in JOB_FIELDS
    ]
    params += [p.replace(kind=keyword) for p in own[1:] if p.name != "job"]

    @functools.wraps(command)
    def declared(options: dict[str, Any], **values: Any) -> None:
        job = _parse_job_values({name: values.pop(name) for name in JOB_FIELDS})
        command(options, job=job, **values)

    declared.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    declared.__annotations__ = {p.name: p.annotation for p in params}
    return declared


def choose_workload(
    workload: str | None, options: dict[str, Any], job: dict[str, Any], extra: Path | str | None = None
) -> Workload:
    """The catalog workload (``extra``: the user's workloads file; its limits tightened by the job
    options) or the ad-hoc JOB."""
    from gpuprice.commands.model_options import setup_from_options
    from gpuprice.models.workloads import get_workload, job_workload, load_workloads, with_limits

    model_given = [f"--{k.replace('_', '-')}" for k, v in options.items() if v is not None]
    job_only = [f"--{k.replace('_', '-')}" for k, v in job.items() if v is not None and k not in LIMIT_FIELDS]
    if workload is not None:
        if model_given or job_only:
            raise BadInput(
                f"give either --workload NAME or a job ({', '.join(model_given + job_only)}), not both"
            )
        return with_limits(get_workload(workload, load_workloads(extra)), {k: job[k] for k in LIMIT_FIELDS})
    if all(options.get(k) is None for k in ("model", "config", "params_b")):
        raise BadInput(
            "give --workload NAME (see `gpuprice workloads`) or a job: --model ID | --config PATH | "
            "--params-b N with --method and --tokens"
        )
    setup_from_options(**options)  # the model options' one-line errors, as for fit
    return job_workload({**options, **job})


def parse_price_bases(value: str) -> tuple[str, ...]:
    """``list,from`` -> ("list", "from"); BadInput naming the valid kinds otherwise."""
    from gpuprice.scrapers.offer import PRICE_BASES

    chosen = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    bad = [b for b in chosen if b not in PRICE_BASES]
    if bad or not chosen:
        raise BadInput(f"unknown price basis {(bad or [value])[0]!r}; valid: {', '.join(PRICE_BASES)}")
    return chosen
