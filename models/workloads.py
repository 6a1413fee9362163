"""The workload catalog: training jobs that offers are ranked for (``models/workloads.yaml``).

Users extend or override it with their own YAML file named by ``GPUPRICE_WORKLOADS`` (read by
gpuprice.settings and passed in as ``extra``; same format;
a workload with the same name replaces the built-in one). Any problem in a file is one BadInput
line naming the file, the line and the field (YAML marks + pydantic locations).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from gpuprice.bounded_load import load_yaml
from gpuprice.errors import BadInput, read_text_input, unknown_choice
from gpuprice.models.workload_jobs import (  # re-exported: callers import the job helpers from here too
    JOB_FIELDS,
    LIMIT_FIELDS,
    job_name,
    job_workload,
    with_limits,
)
from gpuprice.models.workload_model import Workload  # re-exported: the catalog's entry type

__all__ = [
    "BUILTIN_PATH",
    "JOB_FIELDS",
    "LIMIT_FIELDS",
    "Workload",
    "get_workload",
    "job_name",
    "job_workload",
    "load_file",
    "load_workloads",
    "with_limits",
]

BUILTIN_PATH = Path(__file__).with_name("workloads.yaml")


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
