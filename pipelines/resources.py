"""Dagster resources: the warehouse (one writer, pool ``duckdb``) and scrape settings."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource

from gpuprice.sources import PageSource
from gpuprice.warehouse import settings
from gpuprice.warehouse.schema import migrate
from gpuprice.warehouse.views import create_views

# Every asset that writes to DuckDB runs in this pool; dagster.yaml limits it to 1 slot.
WAREHOUSE_POOL = "duckdb"


class WarehouseResource(DuckDBResource):
    """DuckDB warehouse under GPUPRICE_HOME, migrated to the current schema on open."""

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

    @contextlib.contextmanager
    def open(self) -> Iterator[duckdb.DuckDBPyConnection]:
        self.home_path.mkdir(parents=True, exist_ok=True)
        with self.get_connection() as con:
            try:
                migrate(con)
                create_views(con)
                yield con
            finally:
                con.close()  # dagster-duckdb closes only when the block succeeds


class ScrapeSettings(dg.ConfigurableResource):
    """Where pages come from: ``live`` (polite HTTP) or ``archive`` (recorded pages)."""

    source: PageSource = "archive"
    archive_dir: str = ""

    @property
    def archive_path(self) -> Path:
        return Path(self.archive_dir) if self.archive_dir else settings.archive_dir()


def default_resources(
    home: Path | None = None, source: str = "archive", archive_dir: Path | None = None
) -> dict:
    home = home or settings.home()
    return {
        "warehouse": WarehouseResource.for_home(home),
        "scrape": ScrapeSettings(source=source, archive_dir=str(archive_dir or "")),
    }
