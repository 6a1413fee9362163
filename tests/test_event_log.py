"""The instance's pooled event log (pipelines/event_log.py) writes what Dagster's own storage reads."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import dagster as dg
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME, SqliteEventLogStorage

from gpuprice.pipelines.event_log import PooledSqliteEventLogStorage, events_folder
from gpuprice.pipelines.instance import cli_instance, dagster_home


@dg.asset
def tiny() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"rows": 3})


@dg.asset_check(asset=tiny)
def tiny_has_rows() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=True, metadata={"rows": 3})


def test_a_run_through_the_pooled_log_reads_back_with_dagsters_own_storage(tmp_path: Path):
    instance = cli_instance(tmp_path)
    try:
        assert isinstance(instance.event_log_storage, PooledSqliteEventLogStorage)
        for _ in range(2):  # the second run goes through the remembered schema look-ups
            assert dg.materialize([tiny, tiny_has_rows], instance=instance).success
    finally:
        instance.dispose()

    stock = SqliteEventLogStorage(str(events_folder(dagster_home(tmp_path))))
    try:
        records = stock.fetch_materializations(dg.AssetKey("tiny"), limit=10).records
        assert len(records) == 2
        assert records[0].asset_materialization is not None
        assert records[0].asset_materialization.metadata["rows"] == dg.MetadataValue.int(3)
        checks = stock.get_asset_check_execution_history(
            dg.AssetCheckKey(dg.AssetKey("tiny"), "tiny_has_rows"), limit=10
        )
        assert len(checks) == 2 and all(c.status.value == "SUCCEEDED" for c in checks)
    finally:
        stock.dispose()


def test_a_table_is_remembered_once_present_and_asked_again_while_missing(tmp_path: Path):
    storage = PooledSqliteEventLogStorage(str(tmp_path))
    try:
        assert storage.has_table("asset_check_executions")
        assert not storage.has_table("added_by_a_later_migration")
        # Another process (`dagster instance migrate`) adds it: the next question sees it.
        with sqlite3.connect(tmp_path / f"{INDEX_SHARD_NAME}.db") as con:
            con.execute("CREATE TABLE added_by_a_later_migration (id INTEGER)")
        assert storage.has_table("added_by_a_later_migration")
    finally:
        storage.dispose()
