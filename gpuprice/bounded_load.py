"""One bounded JSON/YAML reader for user files and scraped JSON: size and depth limits, strict types.

Python's readers accept what a hostile or broken file throws at them: a 3,000-deep list is a
RecursionError, ``NaN``/``Infinity`` become floats, a 5,000-digit integer a ValueError deep in
the parser, a repeated key silently takes the last value, and YAML 1.1 reads ``yes``/``on`` as
true (and ``true`` is an int to Python). Here each is a ``ValueError`` with one line naming it;
callers turn that into their own error (BadInput for a user's file, StructureMissing for a page).
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

MAX_BYTES = 50_000_000
MAX_DEPTH = 64
MAX_INT_DIGITS = 30  # beyond any count, size or price a config or page states


def load_json(text: str | bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """Strict JSON: ValueError (one line) on a size, depth, constant, big-integer or duplicate-key problem."""
    if len(text) > max_bytes:
        raise ValueError(f"larger than {max_bytes:,} bytes")
    try:
        data = json.loads(
            text,
            object_pairs_hook=_unique_object,
            parse_constant=_refuse_constant,
            parse_int=_bounded_int,
        )
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    _check_depth(data, max_depth)
    return data


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"integer with {len(text.lstrip('-')):,} digits")
    return int(text)


def _check_depth(data: Any, max_depth: int) -> None:
    stack = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > max_depth:
                raise ValueError(f"nested deeper than {max_depth} levels")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


class StrictYamlLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans (only true/false), no duplicate keys, bounded depth."""

    max_depth = MAX_DEPTH

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > self.max_depth:
                mark = self.peek_event().start_mark
                raise ValueError(f"line {mark.line + 1}: nested deeper than {self.max_depth} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (list, dict)):
                continue  # unhashable: SafeLoader reports it
            if key in seen:
                raise ValueError(f"line {key_node.start_mark.line + 1}: duplicate key {key!r}")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


# YAML 1.1 reads yes/no/on/off/y/n as booleans; YAML 1.2 (and people) mean only true/false.
StrictYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
StrictYamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load_yaml(text: str, *, max_bytes: int = MAX_BYTES) -> tuple[Any, Any]:
    """(data, root node) of strict YAML; ValueError (one line) on size, depth, duplicates.

    yaml.YAMLError passes through so callers can name its line as before.
    """
    if len(text) > max_bytes:
        raise ValueError(f"larger than {max_bytes:,} bytes")
    loader = StrictYamlLoader(text)
    try:  # one parse: the data is constructed from the composed node tree
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()
    return data, root
