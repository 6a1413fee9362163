"""One warehouse connection for a whole in-process run, given up whenever the run stops using it.

Opening the warehouse costs ~15 ms (a DuckDB instance, the catalog) and closing it a checkpoint
(~20-40 ms): a daily run of 17 steps spent ~1 s of its ~5 s opening and closing. A CLI run
(``gpuprice run``, ``gpuprice backfill``) runs every step in one process, one after the other,
so its steps can share one connection.

The pool of one still gives the writer's slot to a step, not to a run: between two steps another
run's step may take the slot and wait for DuckDB's file lock, while this run's next step waits
for the slot. So the connection is closed as soon as the run has not used it for
``IDLE_RELEASE_SECONDS`` (a watcher thread), and after a step that failed (its connection may be
in any state); the next step simply opens a new one. Runs launched by the UI or the daemon run
each step in its own process and are not affected.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import duckdb

# Steps of one run follow each other within ~10-50 ms of Dagster's bookkeeping; a longer gap
# means this run is waiting (for the pool's slot, for rendering) and the file should be free.
IDLE_RELEASE_SECONDS = 0.3

Opener = Callable[[], AbstractContextManager[duckdb.DuckDBPyConnection]]


class SharedConnection:
    """A connection to ``database`` opened on first use, lent to one step at a time (nested lends
    of the same step reuse it) and closed when idle, after a failure, or at ``close()``."""

    def __init__(self, database: str, idle_release_seconds: float = IDLE_RELEASE_SECONDS) -> None:
        self.database = database
        self.idle_release_seconds = idle_release_seconds
        self.opened = 0  # how many times a connection was opened (the benchmark and tests read it)
        self._lock = threading.Condition()
        self._context: AbstractContextManager[duckdb.DuckDBPyConnection] | None = None
        self._connection: duckdb.DuckDBPyConnection | None = None
        self._lent = 0
        self._idle_since = time.monotonic()
        self._closing = False
        self._watcher = threading.Thread(target=self._watch, name="gpuprice-warehouse-idle", daemon=True)
        self._watcher.start()

    @contextlib.contextmanager
    def lend(self, opener: Opener) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._lock:
            if self._connection is None:
                context = opener()
                self._connection = context.__enter__()
                self._context = context
                self.opened += 1
            self._lent += 1
            con = self._connection
        failed = False
        try:
            yield con
        except BaseException:
            failed = True
            raise
        finally:
            with self._lock:
                self._lent -= 1
                self._idle_since = time.monotonic()
                if self._lent == 0:
                    _end_open_transaction(con)
                    if failed:  # whatever state the failure left behind stays with that step
                        self._release()
                self._lock.notify_all()

    def close(self) -> None:
        with self._lock:
            self._closing = True
            self._release()
            self._lock.notify_all()
        self._watcher.join()

    def _release(self) -> None:
        """Close the connection (checkpointing it); the caller holds the lock."""
        context, self._context, self._connection = self._context, None, None
        if context is not None:
            context.__exit__(None, None, None)

    def _watch(self) -> None:
        with self._lock:
            while not self._closing:
                if self._connection is None or self._lent:
                    self._lock.wait()
                    continue
                idle = time.monotonic() - self._idle_since
                if idle >= self.idle_release_seconds:
                    self._release()
                else:
                    self._lock.wait(self.idle_release_seconds - idle)


def _end_open_transaction(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back a transaction a step left open, so the next step never writes inside it."""
    with contextlib.suppress(duckdb.Error):  # "no transaction is active": the usual case
        con.execute("ROLLBACK")


_SHARED: contextvars.ContextVar[SharedConnection | None] = contextvars.ContextVar(
    "gpuprice_shared_warehouse", default=None
)


def shared_connection_for(database: str) -> SharedConnection | None:
    """The run's shared connection to ``database``, when the current run has one."""
    shared = _SHARED.get()
    return shared if shared is not None and shared.database == database else None


@contextlib.contextmanager
def sharing_connection(database: str) -> Iterator[SharedConnection]:
    """Let every step run inside this block (in this thread) share one connection to ``database``."""
    shared = SharedConnection(database)
    token = _SHARED.set(shared)
    try:
        yield shared
    finally:
        _SHARED.reset(token)
        shared.close()
