"""Where gpuprice keeps its files. Everything lives under GPUPRICE_HOME (default ./data)."""

from __future__ import annotations

import os
from pathlib import Path

SAMPLE_ARCHIVE = Path(__file__).resolve().parent.parent / "scrapers" / "sample_archive"


def home() -> Path:
    return Path(os.environ.get("GPUPRICE_HOME", "data")).expanduser().resolve()


def warehouse_path() -> Path:
    return home() / "warehouse.duckdb"


def analytics_path() -> Path:
    """The published read-only copy analysts open."""
    return home() / "analytics.duckdb"


def raw_dir() -> Path:
    return home() / "raw"


def reports_dir() -> Path:
    return home() / "reports"


def exports_dir() -> Path:
    return home() / "exports"


def dagster_home() -> Path:
    return home() / "dagster"


def archive_dir() -> Path:
    """Recorded pages replayed by ``--source archive`` (default: the bundled sample archive)."""
    value = os.environ.get("GPUPRICE_ARCHIVE")
    return Path(value).expanduser().resolve() if value else SAMPLE_ARCHIVE
