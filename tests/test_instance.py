"""The Dagster instance folder under $GPUPRICE_HOME: its dagster.yaml follows the project's template."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuprice.errors import BadInput
from gpuprice.pipelines.instance import dagster_home

TEMPLATE = Path(__file__).resolve().parent.parent / "pipelines" / "dagster.yaml"


def test_the_instance_config_is_the_template_and_follows_its_changes(tmp_path: Path) -> None:
    folder = dagster_home(tmp_path)
    config = folder / "dagster.yaml"
    assert folder == tmp_path / "dagster"
    assert config.read_bytes() == TEMPLATE.read_bytes()
    config.write_text("telemetry:\n  enabled: true\n")  # an old copy, or a template that changed since
    dagster_home(tmp_path)
    assert config.read_bytes() == TEMPLATE.read_bytes()
    assert not list(folder.glob(".*.tmp"))


def test_an_instance_folder_that_is_a_file_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "dagster").write_text("not a folder")
    with pytest.raises(BadInput, match=r"cannot write the Dagster instance folder .*dagster.*writable"):
        dagster_home(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_instance_folder_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "dagster").mkdir()
    (tmp_path / "dagster").chmod(0o500)
    try:
        with pytest.raises(BadInput, match=r"cannot write the Dagster instance folder .*dagster"):
            dagster_home(tmp_path)
    finally:
        (tmp_path / "dagster").chmod(0o700)


def test_make_dev_gets_the_folder_or_one_line_and_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "GPUPRICE_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-m", "gpuprice.pipelines.instance"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "home" / "dagster")
    (tmp_path / "file").write_text("not a folder")
    env["GPUPRICE_HOME"] = str(tmp_path / "file")
    done = subprocess.run(
        [sys.executable, "-m", "gpuprice.pipelines.instance"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "GPUPRICE_HOME" in done.stderr
