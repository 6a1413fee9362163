"""`gpuprice ARGS...` with one provider's snapshot write held open inside its transaction.

For the SIGKILL test: when the partition of the provider named by GPUPRICE_TEST_HOLD has been
deleted and re-inserted but not committed, this prints ``HOLDING`` on stdout and waits to be
killed, so the kill lands at the worst moment deterministically.

Usage: PYTHONPATH=tests python -m faults.hold_in_transaction run --date YYYY-MM-DD ...
"""

from __future__ import annotations

import os
import sys
import time

import gpuprice.warehouse.writes as writes

HELD_PROVIDER = os.environ["GPUPRICE_TEST_HOLD"]
_replace = writes.replace_snapshot_partitions  # what every snapshot write goes through


class _HoldAfterInsert:
    """A DuckDB connection that stops right after the INSERT into price_snapshots."""

    def __init__(self, con) -> None:
        self._con = con

    def __getattr__(self, name: str):
        return getattr(self._con, name)

    def execute(self, sql: str, *args):
        result = self._con.execute(sql, *args)
        code = " ".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
        if code.lstrip().upper().startswith("INSERT INTO PRICE_SNAPSHOTS"):  # after the file's comment
            print("HOLDING", flush=True)
            time.sleep(600)  # the test kills us here (SIGKILL): no rollback, no cleanup
        return result


def _held_replace(con, **kwargs):
    if kwargs.get("provider") == HELD_PROVIDER:
        con = _HoldAfterInsert(con)
    return _replace(con, **kwargs)


writes.replace_snapshot_partitions = _held_replace

if __name__ == "__main__":
    from gpuprice.cli import main

    main(sys.argv[1:])
