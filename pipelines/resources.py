"""Dagster resources: the warehouse (one writer, pool ``duckdb``) and scrape settings."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource

from gpuprice.models.workloads import Workload, load_workloads
from gpuprice.scrapers.archive import archive_or_sample
from gpuprice.settings import DEFAULT_SOURCE, Settings
from gpuprice.sources import StepSource
from gpuprice.warehouse.connection import connect_writer

# Every asset that writes to DuckDB runs in this pool; dagster.yaml limits it to 1 slot.
WAREHOUSE_POOL = "duckdb"

# The connection a step shares among its writes (WarehouseResource.session): (database, connection).
_SESSION: contextvars.ContextVar[tuple[str, duckdb.DuckDBPyConnection] | None] = contextvars.ContextVar(
    "gpuprice_warehouse_session", default=None
)


class WarehouseResource(DuckDBResource):
    """DuckDB warehouse under the settings' home, migrated to the current schema on open."""

    home: str

    @classmethod
    def for_home(cls, home: Path) -> WarehouseResource:
        return cls(database=str(home / "warehouse.duckdb"), home=str(home))

    @property
    def home_path(self) -> Path:
        return Path(self.home)

    @property
    def database_path(self) -> Path:
        return Path(self.database)

    def _session_connection(self) -> duckdb.DuckDBPyConnection | None:
        active = _SESSION.get()
        return active[1] if active is not None and active[0] == self.database else None

    @contextlib.contextmanager
    def session(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One connection for a whole step: every ``open()`` inside it reuses it.

        A provider's step writes four times; one connection per step (opening costs ~15 ms, closing
        a checkpoint) that closes when the step ends, so the file's lock is free between steps."""
        with self.open() as con:
            token = _SESSION.set((self.database, con))
            try:
                yield con
            finally:
                _SESSION.reset(token)

    @contextlib.contextmanager
    def open(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A writer's connection: the step's session when one is open, else a new one."""
        active = self._session_connection()
        if active is not None:
            yield active
            return
        with self._connect() as con:
            yield con

    @contextlib.contextmanager
    def _connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        self.home_path.mkdir(parents=True, exist_ok=True)
        # Not dagster-duckdb's get_connection: it retries a held lock with its own backoff, past
        # GPUPRICE_LOCK_TIMEOUT; connect_writer waits at most that long, then WarehouseBusy.
        con = connect_writer(self.database_path)
        try:
            yield con
        finally:
            con.close()


class ScrapeSettings(dg.ConfigurableResource):
    """Where pages come from: ``live`` (polite HTTP), ``archive`` (recorded pages) or ``raw``
    (the pages already kept in the raw store, parsed again: a backfill after a parser fix)."""

    source: StepSource = DEFAULT_SOURCE
    archive_dir: str = ""  # empty: the sample archive shipped with the package

    @property
    def archive_path(self) -> Path:
        return archive_or_sample(Path(self.archive_dir) if self.archive_dir else None)


class WorkloadCatalog(dg.ConfigurableResource):
    """The workloads offers are ranked for: the built-ins, then ``extra_file`` (GPUPRICE_WORKLOADS)."""

    extra_file: str = ""

    def load(self) -> list[Workload]:
        return load_workloads(Path(self.extra_file) if self.extra_file else None)


def default_resources(
    home: Path,
    source: StepSource = DEFAULT_SOURCE,
    archive_dir: Path | None = None,
    workloads: Path | None = None,
) -> dict[str, Any]:
    """No IO manager: no step hands a value to another (a provider's stages share one step)."""
    return {
        "warehouse": WarehouseResource.for_home(home),
        "scrape": ScrapeSettings(source=source, archive_dir=str(archive_dir or "")),
        "workload_catalog": WorkloadCatalog(extra_file=str(workloads or "")),
    }


def resources_for(settings: Settings) -> dict[str, Any]:
    """The resources a settings object asks for (the code location's edge)."""
    return default_resources(settings.home, settings.source, settings.archive, settings.workloads)
