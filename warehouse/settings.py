"""Where gpuprice keeps its files. Everything lives under GPUPRICE_HOME (default ./data)."""

from __future__ import annotations

import os
from pathlib import Path

from gpuprice.errors import BadInput
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE


def home() -> Path:
    """GPUPRICE_HOME (created on first write). BadInput when it names something that is not a folder."""
    path = Path(os.environ.get("GPUPRICE_HOME", "data")).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise BadInput(f"GPUPRICE_HOME {path} is not a folder; point it at a folder (created when missing)")
    return path


def ensure_home() -> Path:
    """GPUPRICE_HOME, created when missing; BadInput when it cannot be created or written to."""
    path = home()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"cannot create GPUPRICE_HOME {path}: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise BadInput(f"GPUPRICE_HOME {path} is not writable")
    return path


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
