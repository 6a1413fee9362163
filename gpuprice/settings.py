"""gpuprice's configuration: each environment variable is read once, here, into one object.

The edges build it (the CLI per invocation, the Dagster code location at load) with
:meth:`Settings.from_env` and pass it, or the paths it names, down; domain code never reads the
environment. The variables are documented once, in the README's "Configuration" table.

An empty variable means "unset": ``GPUPRICE_HOME=`` is the default ``./data``, not the current
folder.
"""

from __future__ import annotations

import datetime as dt
import math
import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuprice.errors import BadInput
from gpuprice.sources import PAGE_SOURCES, PageSource

HOME_VAR = "GPUPRICE_HOME"
ARCHIVE_VAR = "GPUPRICE_ARCHIVE"
SOURCE_VAR = "GPUPRICE_SOURCE"
WORKLOADS_VAR = "GPUPRICE_WORKLOADS"
LIVE_BASE_URL_VAR = "GPUPRICE_LIVE_BASE_URL"
WAREHOUSE_VAR = "GPUPRICE_WAREHOUSE"
WAREHOUSE_DATA_VAR = "GPUPRICE_WAREHOUSE_DATA"
SQL_TIMEOUT_VAR = "GPUPRICE_SQL_TIMEOUT"
SQL_MAX_ROWS_VAR = "GPUPRICE_SQL_MAX_ROWS"
SQL_MAX_BYTES_VAR = "GPUPRICE_SQL_MAX_BYTES"
LOCK_TIMEOUT_VAR = "GPUPRICE_LOCK_TIMEOUT"
LAKE_SNAPSHOT_DAYS_VAR = "GPUPRICE_LAKE_SNAPSHOT_DAYS"
# A DuckLake keeps its snapshots (time travel) this many days; older ones are expired and their
# no longer referenced Parquet files removed at each publish.
DEFAULT_LAKE_SNAPSHOT_DAYS = 7.0
FIRST_DAY_VAR = "GPUPRICE_FIRST_DAY"
# Where the data starts: the month of the sample archive's earliest recorded page (2025-05-29).
# The first daily partition; an archive that starts earlier sets GPUPRICE_FIRST_DAY.
DEFAULT_FIRST_DAY = dt.date(2025, 5, 1)
# `gpuprice sql` limits: an analyst's query is interrupted after a minute and returns at most
# 200,000 rows (the whole sample warehouse is ~1,000; the Parquet exports serve bulk reads).
DEFAULT_SQL_TIMEOUT_S = 60.0
DEFAULT_SQL_MAX_ROWS = 200_000
DEFAULT_SQL_MAX_BYTES = 64_000_000  # of result text: a terminal or a pipe, not a bulk export
# How long a writer waits for the warehouse another process holds before giving up (one line).
DEFAULT_LOCK_TIMEOUT_S = 60.0
DEFAULT_HOME = Path("data")
# One default for every entry point (gpuprice run and the Dagster code location): replaying the
# recorded pages never touches the network by surprise; a deployment that scrapes sets live.
DEFAULT_SOURCE: PageSource = "archive"


def _base_url(text: str | None) -> str | None:
    if text is None:
        return None
    if not text.startswith(("http://", "https://")):
        raise BadInput(f"{LIVE_BASE_URL_VAR}={text!r} is not an http(s) URL; e.g. http://127.0.0.1:8000")
    return text.rstrip("/")


class Settings(BaseModel):
    """Where gpuprice keeps its files and where its pages come from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    home: Path = Field(description="warehouse, raw pages, exports, reports, Dagster home")
    archive: Path | None = Field(
        default=None, description="recorded pages for --source archive; None: the bundled sample"
    )
    source: PageSource = Field(default=DEFAULT_SOURCE, description="page source when none is given")
    workloads: Path | None = Field(default=None, description="extra workload YAML over the built-ins")
    live_base_url: str | None = Field(
        default=None,
        description="check-live sends each provider's requests to <this>/<provider><path> (tests, mirrors)",
    )
    sql_timeout_s: float = Field(default=DEFAULT_SQL_TIMEOUT_S, gt=0, description="gpuprice sql time limit")
    sql_max_rows: int = Field(default=DEFAULT_SQL_MAX_ROWS, ge=1, description="gpuprice sql row limit")
    sql_max_bytes: int = Field(
        default=DEFAULT_SQL_MAX_BYTES, ge=1, description="gpuprice sql result size limit"
    )
    lock_timeout_s: float = Field(
        default=DEFAULT_LOCK_TIMEOUT_S, gt=0, description="longest wait for a warehouse another process holds"
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings the environment asks for (``env`` defaults to ``os.environ``)."""
        env = os.environ if env is None else env

        def value(name: str) -> str | None:
            text = env.get(name, "").strip()
            return text or None

        def folder(name: str) -> Path | None:
            text = value(name)
            return Path(text).expanduser().resolve() if text else None

        source = (value(SOURCE_VAR) or DEFAULT_SOURCE).lower()
        if source not in PAGE_SOURCES:
            raise BadInput(f"{SOURCE_VAR}={source!r} is not a source; valid: {', '.join(PAGE_SOURCES)}")
        try:
            return cls(
                home=folder(HOME_VAR) or DEFAULT_HOME.resolve(),
                archive=folder(ARCHIVE_VAR),
                source=source,
                workloads=Path(text).expanduser() if (text := value(WORKLOADS_VAR)) else None,
                live_base_url=_base_url(value(LIVE_BASE_URL_VAR)),
                sql_timeout_s=_positive(SQL_TIMEOUT_VAR, value(SQL_TIMEOUT_VAR), DEFAULT_SQL_TIMEOUT_S),
                sql_max_rows=int(_positive(SQL_MAX_ROWS_VAR, value(SQL_MAX_ROWS_VAR), DEFAULT_SQL_MAX_ROWS)),
                sql_max_bytes=int(
                    _positive(SQL_MAX_BYTES_VAR, value(SQL_MAX_BYTES_VAR), DEFAULT_SQL_MAX_BYTES)
                ),
                lock_timeout_s=lock_timeout(env),
            )
        except ValidationError as exc:  # pragma: no cover - every field is checked above
            raise BadInput(f"bad gpuprice settings: {exc.errors()[0]['msg']}") from None

    @staticmethod
    def lock_timeout(env: Mapping[str, str] | None = None) -> float:
        """GPUPRICE_LOCK_TIMEOUT in seconds (default 60); BadInput when it is no positive number."""
        return lock_timeout(os.environ if env is None else env)

    @staticmethod
    def lake_snapshot_days(env: Mapping[str, str] | None = None) -> float:
        """GPUPRICE_LAKE_SNAPSHOT_DAYS (default 7; 0 keeps only the newest snapshot); BadInput otherwise."""
        env = os.environ if env is None else env
        text = env.get(LAKE_SNAPSHOT_DAYS_VAR, "").strip()
        if not text:
            return DEFAULT_LAKE_SNAPSHOT_DAYS
        try:
            days = float(text)
        except ValueError:
            days = math.nan
        if not (math.isfinite(days) and 0 <= days <= 36500):
            raise BadInput(f"{LAKE_SNAPSHOT_DAYS_VAR}={text!r} is not a number of days (0 to 36500)")
        return days

    @staticmethod
    def warehouse_engine(env: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
        """(GPUPRICE_WAREHOUSE, GPUPRICE_WAREHOUSE_DATA): the warehouse engine (unset or ``duckdb``:
        the embedded file; ``ducklake:<catalog>``) and a DuckLake's data path, both unchecked here
        (``warehouse.lake.select`` checks them)."""
        env = os.environ if env is None else env
        return (env.get(WAREHOUSE_VAR, "").strip() or None, env.get(WAREHOUSE_DATA_VAR, "").strip() or None)

    @staticmethod
    def first_day(env: Mapping[str, str] | None = None) -> dt.date:
        """GPUPRICE_FIRST_DAY: the first date of the daily partitions (default DEFAULT_FIRST_DAY)."""
        env = os.environ if env is None else env
        text = env.get(FIRST_DAY_VAR, "").strip()
        if not text:
            return DEFAULT_FIRST_DAY
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            raise BadInput(f"{FIRST_DAY_VAR}={text!r} is not a date; give YYYY-MM-DD") from None

    # ----- the files under home ------------------------------------------------------------------
    @property
    def warehouse_path(self) -> Path:
        return self.home / "warehouse.duckdb"

    @property
    def analytics_path(self) -> Path:
        """The published read-only copy analysts open."""
        return self.home / "analytics.duckdb"

    @property
    def raw_dir(self) -> Path:
        return self.home / "raw"

    @property
    def reports_dir(self) -> Path:
        return self.home / "reports"

    @property
    def exports_dir(self) -> Path:
        return self.home / "exports"

    @property
    def dagster_home(self) -> Path:
        return self.home / "dagster"

    def checked_home(self) -> Path:
        """``home``; BadInput when it names something that is not a folder."""
        if self.home.exists() and not self.home.is_dir():
            raise BadInput(
                f"{HOME_VAR} {self.home} is not a folder; point it at a folder (created when missing)"
            )
        return self.home

    def ensure_home(self) -> Path:
        """``home``, created when missing; BadInput when it cannot be created or written to."""
        path = self.checked_home()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"cannot create {HOME_VAR} {path}: {exc.strerror or exc}") from None
        if not os.access(path, os.W_OK | os.X_OK):
            raise BadInput(f"{HOME_VAR} {path} is not writable")
        return path


def lock_timeout(env: Mapping[str, str]) -> float:
    text = env.get(LOCK_TIMEOUT_VAR, "").strip() or None
    return _positive(LOCK_TIMEOUT_VAR, text, DEFAULT_LOCK_TIMEOUT_S)


def _positive(name: str, text: str | None, default: float) -> float:
    """A positive finite number from a variable, or ``default`` when unset; BadInput otherwise."""
    if text is None:
        return default
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and 0 < number <= 1e9):
        raise BadInput(f"{name}={text!r} is not a positive number (at most 1e9)")
    return number
