"""Settings in one place: the environment read once, with one default each (README, Configuration)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuprice.errors import BadInput
from gpuprice.pipelines.resources import ScrapeSettings, resources_for
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE
from gpuprice.settings import Settings


def test_defaults_and_empty_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for env in (
        {},
        {"GPUPRICE_HOME": "", "GPUPRICE_ARCHIVE": " ", "GPUPRICE_SOURCE": "", "GPUPRICE_WORKLOADS": ""},
    ):
        settings = Settings.from_env(env)
        # GPUPRICE_HOME= (empty) is the default ./data, not the current folder.
        assert settings.home == tmp_path / "data"
        assert settings.archive is None and settings.workloads is None
        assert settings.source == "archive"
    assert Settings.from_env({}).analytics_path == tmp_path / "data" / "analytics.duckdb"


def test_values_from_the_environment(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {
            "GPUPRICE_HOME": str(tmp_path / "h"),
            "GPUPRICE_ARCHIVE": str(tmp_path / "a"),
            "GPUPRICE_SOURCE": "LIVE",
            "GPUPRICE_WORKLOADS": str(tmp_path / "w.yaml"),
        }
    )
    assert (settings.home, settings.archive, settings.source) == (tmp_path / "h", tmp_path / "a", "live")
    assert settings.workloads == tmp_path / "w.yaml"
    assert settings.raw_dir == tmp_path / "h" / "raw"


def test_a_bad_source_or_home_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"GPUPRICE_SOURCE='web' is not a source; valid: live, archive"):
        Settings.from_env({"GPUPRICE_SOURCE": "web"})
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(BadInput, match="is not a folder"):
        Settings.from_env({"GPUPRICE_HOME": str(afile)}).ensure_home()


def test_the_code_location_has_the_cli_default(tmp_path: Path) -> None:
    # One default for GPUPRICE_SOURCE: gpuprice run and the Dagster code location agree.
    resources = resources_for(Settings.from_env({"GPUPRICE_HOME": str(tmp_path)}))
    scrape = resources["scrape"]
    assert isinstance(scrape, ScrapeSettings)
    assert scrape.source == "archive" and scrape.archive_path == SAMPLE_ARCHIVE
    live = resources_for(Settings.from_env({"GPUPRICE_HOME": str(tmp_path), "GPUPRICE_SOURCE": "live"}))
    assert live["scrape"].source == "live"  # type: ignore[attr-defined]
