"""The instance's event log: Dagster's SQLite storage with one engine per database file.

Dagster's ``SqliteEventLogStorage`` builds a new SQLAlchemy engine, opens a new SQLite
connection and commits with a full fsync for every write: ~10 ms per event, so a CLI run's
~270 events cost ~3 s and a five-year single-run backfill's ~60,000 partition events over ten
minutes. This storage keeps the same files and tables (the UI and ``dagster`` commands read them
as usual) but keeps one engine per file with pooled connections, and runs SQLite in WAL mode
with ``synchronous=NORMAL``: a power cut can lose the last events, never corrupt the file, and
readers (the UI) never block the writer. pipelines/dagster.yaml selects it for the UI, the
daemon and the runs they launch; the CLI selects it too (pipelines/instance.py).

The index shard's engine lives as long as the storage; per-run shards keep an engine only for
the few most recent runs, so a daemon that launches runs for months holds a bounded number of
files open.

Batches (``DAGSTER_EVENT_BATCH_SIZE`` > 0, which pipelines/instance.py sets for CLI runs and
``make dev`` for the UI: a run's planned materializations and checks, a multi-partition step's
materializations) are stored in one transaction per file instead of one or more per event:
~1.2 ms per planned event instead of ~4 ms. Dagster stores a batch one event at a time again if
the batch fails.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from dagster import StringSource
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (  # the class Dagster ships
    INDEX_SHARD_NAME,
    SQLITE_BUSY_TIMEOUT_SECONDS,
    SqliteEventLogStorage,
)
from dagster.version import __version__ as dagster_version

RUN_ENGINES_KEPT = 8
# Beside the run files, in a folder of its own: Dagster takes every *.db in the folder for a run.
BLANK_FOLDER = ".blank"


def _tune(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def events_folder(dagster_home: Path) -> Path:
    """Where Dagster's default SQLite event log lives under an instance folder."""
    return dagster_home / "history" / "runs"


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """``SqliteEventLogStorage`` with an engine per shard kept for the storage's lifetime."""

    def __init__(self, base_dir: str, inst_data: Any = None) -> None:
        self._engines: OrderedDict[str, sa.Engine] = OrderedDict()
        # Tables and asset-key columns seen in the index shard. Dagster asks before every check
        # evaluation and asset event (a new engine and a schema read each time: ~40 % of storing
        # a check event). Only "present" is remembered: migrations add tables and columns, and
        # a wipe keeps the tables.
        self._present_tables: set[str] = set()
        self._present_asset_key_columns: set[str] = set()
        # Connections a batch holds open (their transaction spans the batch), by shard.
        self._held: dict[str, sa.Connection] = {}
        super().__init__(base_dir, inst_data)
        # Re-entrant: a batch holds the lock while each event's writes open their shard again.
        self._db_lock = threading.RLock()  # type: ignore[assignment]

    @classmethod
    def config_type(cls) -> Any:
        # The instance folder ({env: DAGSTER_HOME} in dagster.yaml); the files are where
        # Dagster's default storage keeps them.
        return {"dagster_home": StringSource}

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Any) -> PooledSqliteEventLogStorage:
        return cls(str(events_folder(Path(config_value["dagster_home"]))), inst_data=inst_data)

    def _engine(self, shard: str) -> sa.Engine:
        engine = self._engines.get(shard)
        if engine is None:
            engine = sa.create_engine(
                self.conn_string_for_shard(shard),
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
            )
            sa.event.listen(engine, "connect", _tune)
            self._engines[shard] = engine
            runs = [s for s in self._engines if s != INDEX_SHARD_NAME]
            for old in runs[:-RUN_ENGINES_KEPT]:
                self._engines.pop(old).dispose()
        else:
            self._engines.move_to_end(shard)
        return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator[sa.Connection]:
        with self._db_lock:
            held = self._held.get(shard)  # only ever set by the thread holding the lock
            if held is not None:
                yield held
                return
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                if shard == INDEX_SHARD_NAME or not self._copy_blank_run_shard(shard):
                    self._initdb(engine)  # Dagster's check, and its migrations when one is due
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def _copy_blank_run_shard(self, shard: str) -> bool:
        """Create a new run's file as a copy of a blank one; False when the file already exists.

        Dagster creates each run's file by reading its migration scripts, creating ~20 tables and
        indexes and stamping the revision: ~50 ms for every run. The blank file is made once by
        that same code (``_initdb``), per Dagster and SQLAlchemy version, outside the folder
        Dagster lists run files in."""
        target = Path(self.path_for_shard(shard))
        if target.exists():
            return False
        blank = self._blank_run_shard()
        staging = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            shutil.copyfile(blank, staging)
            os.link(staging, target)  # never replaces a file another process just created
        except FileExistsError:
            return False
        finally:
            staging.unlink(missing_ok=True)
        return True

    def _blank_run_shard(self) -> Path:
        blank = Path(self._base_dir) / BLANK_FOLDER / f"run-{dagster_version}-sqlalchemy-{sa.__version__}.db"
        if not blank.exists():
            blank.parent.mkdir(parents=True, exist_ok=True)
            staging = blank.with_name(f".{blank.name}.{os.getpid()}.tmp")
            engine = sa.create_engine(f"sqlite:///{staging}", poolclass=sa.pool.NullPool)
            try:
                self._initdb(engine)
            finally:
                engine.dispose()  # the last connection closed: the WAL is folded into the file
            os.replace(staging, blank)
        return blank

    @contextmanager
    def _holding(self, shard: str) -> Iterator[None]:
        with self._connect(shard) as conn:
            self._held[shard] = conn
            try:
                yield
            finally:
                del self._held[shard]

    def store_event_batch(self, events: Sequence[Any]) -> None:
        """Store ``events`` exactly as ``store_event`` would, in one transaction per shard.

        The run shards commit before the index shard, so a failure in between leaves the
        asset tables (what the UI and sensors act on) without the batch, never half of it."""
        run_shards = list(dict.fromkeys(event.run_id for event in events))
        with self._db_lock, ExitStack() as held:
            held.enter_context(self._holding(INDEX_SHARD_NAME))
            for shard in run_shards:  # entered after the index: they exit (commit) first
                held.enter_context(self._holding(shard))
            for event in events:
                self.store_event(event)

    def has_table(self, table_name: str) -> bool:
        if table_name in self._present_tables:
            return True
        with self._engine(INDEX_SHARD_NAME).connect() as conn:
            present = bool(sa.inspect(conn).has_table(table_name))
        if present:
            self._present_tables.add(table_name)
        return present

    def _has_asset_key_col_on_connection(self, conn: sa.Connection, column_name: str) -> bool:
        if column_name in self._present_asset_key_columns:
            return True
        present = super()._has_asset_key_col_on_connection(conn, column_name)
        if present:
            self._present_asset_key_columns.add(column_name)
        return present

    def dispose(self) -> None:
        for engine in self._engines.values():
            engine.dispose()
        self._engines.clear()
        super().dispose()
