"""The instance's event log: Dagster's SQLite storage with one engine per database file.

Dagster's ``SqliteEventLogStorage`` builds a new SQLAlchemy engine, opens a new SQLite
connection and commits with a full fsync for every write: ~10 ms per event, so a CLI run's
~270 events cost ~3 s and a five-year single-run backfill's ~60,000 partition events over ten
minutes. This storage keeps the same files and tables (the UI and ``dagster`` commands read them
as usual) but keeps one engine per file with pooled connections, and runs SQLite in WAL mode
with ``synchronous=NORMAL``: a power cut can lose the last events, never corrupt the file, and
readers (the UI) never block the writer. The CLI selects it (pipelines/instance.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (  # the class Dagster ships
    SQLITE_BUSY_TIMEOUT_SECONDS,
    SqliteEventLogStorage,
)


def _tune(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """``SqliteEventLogStorage`` with an engine per shard kept for the storage's lifetime."""

    def __init__(self, base_dir: str, inst_data: Any = None) -> None:
        self._engines: dict[str, sa.Engine] = {}
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Any) -> PooledSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def _engine(self, shard: str) -> sa.Engine:
        engine = self._engines.get(shard)
        if engine is None:
            engine = sa.create_engine(
                self.conn_string_for_shard(shard),
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
            )
            sa.event.listen(engine, "connect", _tune)
            self._engines[shard] = engine
        return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator[sa.Connection]:
        with self._db_lock:
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def dispose(self) -> None:
        for engine in self._engines.values():
            engine.dispose()
        self._engines.clear()
        super().dispose()
