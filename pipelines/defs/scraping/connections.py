"""The warehouse connection of a scraping step, closed even when the step fails.

dagster-duckdb's ``get_connection`` closes its connection only when the ``with`` body succeeds.
After a failed write (a full disk, say) the connection lives on as long as the exception's
traceback does (Dagster and log handlers keep it), holding the file's write lock and clashing
with the run's own read-only look at the outcome ("different configuration").
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import duckdb

from gpuprice.pipelines.resources import WarehouseResource


@contextlib.contextmanager
def step_connection(warehouse: WarehouseResource) -> Iterator[duckdb.DuckDBPyConnection]:
    with warehouse.open() as con:
        try:
            yield con
        except BaseException:
            con.close()  # closing twice is harmless; leaking it is not
            raise
