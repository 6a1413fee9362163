"""The built wheel is the whole product under one name, and works outside the repository.

The wheel is built from a copy of the tracked sources (the checkout stays clean), without network
or build isolation. It is installed into a fresh venv outside the repository; the third-party
dependencies come from this project's venv through a ``.pth`` line (a plain path entry, so the
project venv's own ``.pth`` files, the editable gpuprice finder among them, are never run). Then,
from an unrelated folder that holds decoy ``models/`` and ``reports/`` packages which raise on
import, the installed ``gpuprice`` replays a day and answers a query.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
DAY = "2026-10-06"


def test_every_package_folder_is_in_the_packages_list() -> None:
    # A sub-package missing from pyproject's list would be silently left out of the wheel.
    listed = set(SETUPTOOLS["packages"])
    found = set()
    for package, folder in SETUPTOOLS["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            relative = init.parent.relative_to(base)
            found.add(".".join([package, *relative.parts]))
    mapped_children = {p for p in SETUPTOOLS["package-dir"] if p != "gpuprice"}
    assert found - listed == set(), f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    assert mapped_children <= listed


def _pip() -> list[str]:
    """A pip that installs into any interpreter given with --python (pip >= 22.3)."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    base = Path(sys.base_prefix) / "bin" / "python3"  # a uv-made venv has no pip of its own
    return [str(base), "-m", "pip", "--python", sys.executable]


def _run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, capture_output=True, text=True, timeout=900, **kwargs)  # type: ignore[call-overload]
    assert result.returncode == 0, (
        f"{args}: exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (t.decode() for t in tracked)):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    _run([*_pip(), "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(out), str(source)])
    (built,) = out.glob("gpuprice-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_is_one_namespace_with_its_data(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        assert archive.read(top_level).decode().split() == ["gpuprice"]
    assert {n.split("/")[0] for n in names if not n.startswith("gpuprice-")} == {"gpuprice"}
    for package in SETUPTOOLS["packages"]:
        assert package.replace(".", "/") + "/__init__.py" in names, package
    # Package data the product reads at run time, per folder of pyproject's package-data.
    for package, patterns in SETUPTOOLS["package-data"].items():
        folder = ROOT / SETUPTOOLS["package-dir"][package]
        for pattern in patterns:
            for path in folder.glob(pattern):
                if path.is_file():
                    inside = package.replace(".", "/") + "/" + path.relative_to(folder).as_posix()
                    assert inside in names, inside
    for expected in (
        "gpuprice/scrapers/sample_archive/lambda/",
        "gpuprice/models/gpu_catalog.csv",
        "gpuprice/models/workloads.yaml",
        "gpuprice/reports/templates/report.css",
        "gpuprice/pipelines/dagster.yaml",
    ):
        assert any(n.startswith(expected) for n in names), expected
    sql = {p.relative_to(ROOT / "warehouse").as_posix() for p in (ROOT / "warehouse").rglob("*.sql")}
    assert {f"gpuprice/warehouse/{p}" for p in sql} <= names


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("venv") / "env"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    pip = _pip()
    pip = (
        [*pip[: pip.index("--python")], "--python", str(python)]
        if "--python" in pip
        else [*pip, "--python", str(python)]
    )
    _run([*pip, "install", "--no-deps", "--no-index", str(wheel)])
    purelib = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    )
    # The dependencies from this project's venv: a path line, so its .pth files are not run.
    (purelib / "project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def _decoy_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    for name in ("models", "reports", "scrapers", "warehouse", "pipelines"):
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(
            f"raise ImportError('decoy {name} package was imported')\n"
        )
    return folder


def _clean_env(tmp_path: Path, decoys: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPRICE_", "PYTHON", "VIRTUAL_ENV"))}
    # The decoys sit in the working folder and on PYTHONPATH: a bare "import models" would find them.
    return {**env, "GPUPRICE_HOME": str(tmp_path / "home"), "PYTHONPATH": str(decoys)}


@pytest.mark.slow
def test_the_installed_wheel_runs_from_a_folder_with_decoys(installed: Path, tmp_path: Path) -> None:
    decoys = _decoy_folder(tmp_path)
    env = _clean_env(tmp_path, decoys)
    python = installed / "bin" / "python"
    where = _run(
        [
            str(python),
            "-c",
            "import sys, gpuprice.scrapers, gpuprice.models.memory, gpuprice.reports.render;"
            "print(gpuprice.scrapers.__file__);"
            "print(any('Editable' in type(f).__name__ for f in sys.meta_path))",
        ],
        cwd=decoys,
        env=env,
    ).stdout.split()
    assert Path(where[0]).is_relative_to(installed) and where[1] == "False", where
    gpuprice = str(installed / "bin" / "gpuprice")
    run = _run([gpuprice, "run", "--source", "archive", "--date", DAY], cwd=decoys, env=env)
    assert "Traceback" not in run.stderr
    assert (tmp_path / "home" / "analytics.duckdb").is_file()
    assert list((tmp_path / "home" / "reports").rglob("index.html")), "reports were rendered"
    sql = _run(
        [gpuprice, "sql", "select count(*) from analytics.latest_prices", "--format", "csv"],
        cwd=decoys,
        env=env,
    )
    count = int(sql.stdout.splitlines()[1])
    assert count > 0
    # python -m puts the working folder first on sys.path: the namespace still wins.
    again = _run(
        [
            str(python),
            "-m",
            "gpuprice",
            "sql",
            "select count(*) from analytics.latest_prices",
            "--format",
            "csv",
        ],
        cwd=decoys,
        env=env,
    )
    assert int(again.stdout.splitlines()[1]) == count
