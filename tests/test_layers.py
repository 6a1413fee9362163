"""Layers read one way (developers' guide): scrapers -> warehouse -> models -> reports.

Every module of the namespace is parsed (no import runs) and each ``gpuprice.*`` import it makes,
at the top or inside a function, is checked against the allowed directions:

- the core (``gpuprice.errors``, ``gpuprice.settings``, ``gpuprice.sources``...) imports no layer;
- each domain layer imports only the core and the layers below it;
- ``pipelines`` (Dagster) only wires: it may import every domain layer;
- the CLI (``gpuprice.cli``, ``gpuprice.commands``) may import everything, and nothing else
  imports it;

and the layers' import graph has no cycle.
"""

from __future__ import annotations

import ast
import functools
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGE_DIRS: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]

DOMAIN_ORDER = ("scrapers", "warehouse", "models", "reports")
ALLOWED: dict[str, set[str]] = {
    "core": {"core"},
    **{layer: {"core", *DOMAIN_ORDER[: i + 1]} for i, layer in enumerate(DOMAIN_ORDER)},
    "pipelines": {"core", *DOMAIN_ORDER, "pipelines"},
    "cli": {"core", *DOMAIN_ORDER, "pipelines", "cli"},
}


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) < 2:
        return "core"
    if parts[1] in ("cli", "commands", "__main__"):
        return "cli"
    if parts[1] in DOMAIN_ORDER or parts[1] == "pipelines":
        return parts[1]
    return "core"


def namespace_modules() -> dict[str, Path]:
    """Every module of the installed namespace, by dotted name, from the package-dir mapping."""
    modules: dict[str, Path] = {}
    for package, folder in PACKAGE_DIRS.items():
        base = ROOT / folder
        for path in base.rglob("*.py"):
            relative = path.relative_to(base)
            if not (path.parent / "__init__.py").exists():
                continue  # sample pages, scripts: not part of a package
            parts = list(relative.with_suffix("").parts)
            if (
                package == "gpuprice"
                and parts
                and parts[0] in {p.split(".")[1] for p in PACKAGE_DIRS if "." in p}
            ):
                continue  # gpuprice/<name> can never shadow a mapped sub-package
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join([package, *parts])] = path
    return modules


@functools.cache
def imports_of(path: Path, module: str) -> set[str]:
    """The gpuprice modules ``path`` imports, relative imports resolved."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                base = node.module or ""
            # "from gpuprice import cli" imports gpuprice.cli: count each name under its base.
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name == "gpuprice" or name.startswith("gpuprice.")}


MODULES = namespace_modules()


def test_the_namespace_is_found() -> None:
    layers = {layer_of(m) for m in MODULES}
    assert layers == {"core", "cli", "pipelines", *DOMAIN_ORDER}
    assert "gpuprice.scrapers.collect" in MODULES and "gpuprice.cli" in MODULES


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_follow_the_layers(module: str) -> None:
    layer = layer_of(module)
    wrong = sorted(
        target for target in imports_of(MODULES[module], module) if layer_of(target) not in ALLOWED[layer]
    )
    assert not wrong, (
        f"{module} ({layer}) imports {', '.join(wrong)}: {layer} may import {sorted(ALLOWED[layer])}"
    )


def test_no_import_cycles_between_layers() -> None:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        source = layer_of(module)
        for target in imports_of(path, module):
            if layer_of(target) != source:
                graph.setdefault(source, set()).add(layer_of(target))

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cyclic = sorted(layer for layer in graph if reaches(layer, layer, {layer}))
    assert not cyclic, f"import cycle through {cyclic}: {graph}"


def test_the_check_catches_a_wrong_direction(tmp_path: Path) -> None:
    # The checker itself can fail: a scraper importing the warehouse and the CLI is caught.
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from gpuprice.warehouse import writes\nimport gpuprice.commands.run\nfrom .offer import Offer\n"
    )
    assert layer_of("gpuprice.cli") == "cli" and ALLOWED["core"] == {"core"}
    found = imports_of(bad, "gpuprice.scrapers.bad")
    assert found == {"gpuprice.warehouse.writes", "gpuprice.commands.run", "gpuprice.scrapers.offer.Offer"}
    assert {layer_of(t) for t in found} - ALLOWED["scrapers"] == {"warehouse", "cli"}


def test_a_missing_command_module_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    from gpuprice import commands

    monkeypatch.setattr(commands, "COMMAND_MODULES", (*commands.COMMAND_MODULES, "no_such_command"))
    with pytest.raises(commands.MissingCommand, match=r"gpuprice\.commands\.no_such_command is missing"):
        commands.register_all(typer.Typer())


# Modules that may touch os.environ, and why; every GPUPRICE_ setting is read by gpuprice.settings.
ENVIRONMENT_READERS = {
    "gpuprice.settings": "the settings object, built at the edges",
    "gpuprice.scrapers.fetch": "API keys, from an injectable mapping that defaults to the environment",
    "gpuprice.scrapers.user_agent": "the User-Agent, from an injectable mapping that defaults to the environment",
    "gpuprice.scrapers.git_history": "copies the environment for the git processes it runs (prompts off)",
}


def test_only_the_settings_read_the_environment() -> None:
    readers = set()
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("environ", "getenv")
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
            ):
                readers.add(module)
    assert readers <= set(ENVIRONMENT_READERS), sorted(readers - set(ENVIRONMENT_READERS))
    assert "gpuprice.settings" in readers
