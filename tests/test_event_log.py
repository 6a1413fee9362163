"""The instance's pooled event log (pipelines/event_log.py) writes what Dagster's own storage reads."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME, SqliteEventLogStorage

from gpuprice.pipelines.event_log import PooledSqliteEventLogStorage, events_folder
from gpuprice.pipelines.instance import EVENT_BATCH_SIZE_VARIABLE, cli_instance, dagster_home
from gpuprice.pipelines.ranges import SINGLE_RUN  # its import silences Dagster's beta notice


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


days = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-08")


@dg.asset(partitions_def=days, backfill_policy=SINGLE_RUN)
def daily_tiny(context) -> dg.MaterializeResult:  # type: ignore[no-untyped-def]  # Dagster reads the hint as a string here
    return dg.MaterializeResult(metadata={"partitions": len(context.partition_keys)})


@dg.asset_check(asset=daily_tiny)
def daily_tiny_has_rows() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=True)


def _index_rows(tmp_path: Path) -> dict[str, list[tuple]]:
    """What the index shard says about the assets: materialized partitions, planned ones, checks."""
    with sqlite3.connect(events_folder(dagster_home(tmp_path)) / f"{INDEX_SHARD_NAME}.db") as con:
        return {
            kind: sorted(con.execute(query).fetchall())
            for kind, query in {
                "events": "SELECT dagster_event_type, asset_key, coalesce(partition, '') FROM event_logs"
                " WHERE asset_key IS NOT NULL",
                "checks": "SELECT asset_key, check_name, coalesce(partition, ''), execution_status"
                " FROM asset_check_executions",
                "keys": "SELECT asset_key FROM asset_keys",
            }.items()
        }


def _run_range(tmp_path: Path) -> str:
    instance = cli_instance(tmp_path)
    try:
        result = dg.materialize(
            [daily_tiny, daily_tiny_has_rows],
            instance=instance,
            tags={
                "dagster/asset_partition_range_start": "2026-01-01",
                "dagster/asset_partition_range_end": "2026-01-07",
            },
        )
        assert result.success
        return result.run_id
    finally:
        instance.dispose()


def test_batched_events_land_exactly_as_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    batches: list[int] = []
    store_batch = PooledSqliteEventLogStorage.store_event_batch

    def counting(self: PooledSqliteEventLogStorage, events):  # type: ignore[no-untyped-def]
        batches.append(len(events))
        store_batch(self, events)

    monkeypatch.setattr(PooledSqliteEventLogStorage, "store_event_batch", counting)
    monkeypatch.setenv(EVENT_BATCH_SIZE_VARIABLE, "0")
    one_at_a_time = _run_range(tmp_path / "single")
    assert batches == []
    monkeypatch.delenv(EVENT_BATCH_SIZE_VARIABLE)
    batched = _run_range(tmp_path / "batched")  # cli_instance asks Dagster to batch
    # The planned materializations and checks, then the seven partitions' materializations.
    assert batches and max(batches) >= 7

    single_rows, batched_rows = _index_rows(tmp_path / "single"), _index_rows(tmp_path / "batched")
    assert batched_rows == single_rows
    assert len([e for e in batched_rows["events"] if e[0] == "ASSET_MATERIALIZATION"]) == 7
    assert "SUCCEEDED" in {c[3] for c in batched_rows["checks"]}
    stock = SqliteEventLogStorage(str(events_folder(dagster_home(tmp_path / "batched"))))
    try:
        assert len(stock.get_logs_for_run(batched)) == len(
            SqliteEventLogStorage(str(events_folder(dagster_home(tmp_path / "single")))).get_logs_for_run(
                one_at_a_time
            )
        )
        status = stock.get_asset_records([dg.AssetKey("daily_tiny")])[0].asset_entry
        assert status.last_materialization is not None
    finally:
        stock.dispose()


def test_a_batch_that_fails_midway_leaves_no_event_of_it_in_any_file(tmp_path: Path):
    instance = cli_instance(tmp_path)
    try:
        run_id = dg.materialize([tiny], instance=instance).run_id
        storage = instance.event_log_storage
        assert isinstance(storage, PooledSqliteEventLogStorage)
        before_run, before_index = len(storage.get_logs_for_run(run_id)), _index_rows(tmp_path)
        events = list(storage.get_logs_for_run(run_id))[:4]
        stored = storage.store_event

        seen: list = []

        def fails_on_the_third(event):  # type: ignore[no-untyped-def]
            seen.append(event)
            if len(seen) == 3:
                raise sqlite3.OperationalError("disk I/O error")
            stored(event)

        storage.store_event = fails_on_the_third  # type: ignore[method-assign]
        with pytest.raises(sqlite3.OperationalError):
            storage.store_event_batch(events)
        storage.store_event = stored  # type: ignore[method-assign]
        assert len(storage.get_logs_for_run(run_id)) == before_run
        assert _index_rows(tmp_path) == before_index
        storage.store_event_batch(events)  # and the storage is usable afterwards
        assert len(storage.get_logs_for_run(run_id)) == before_run + 4
    finally:
        instance.dispose()


def _schema(path: Path) -> tuple[list[tuple], list[tuple]]:
    with sqlite3.connect(path) as con:
        return (
            sorted(con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()),
            con.execute("SELECT version_num FROM alembic_version").fetchall(),
        )


def test_new_run_files_are_copies_of_one_blank_file_made_by_dagster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    storage = PooledSqliteEventLogStorage(str(tmp_path / "pooled"))
    stock = SqliteEventLogStorage(str(tmp_path / "stock"))
    inits: list[str] = []
    real_initdb = PooledSqliteEventLogStorage._initdb

    def counting(self, engine, for_index_shard=False):  # type: ignore[no-untyped-def]
        inits.append(str(engine.url))
        real_initdb(self, engine, for_index_shard)

    monkeypatch.setattr(PooledSqliteEventLogStorage, "_initdb", counting)
    try:
        for run_id in ("run-one", "run-two"):
            with storage.run_connection(run_id) as conn:
                conn.exec_driver_sql("SELECT count(*) FROM event_logs")
        with stock.run_connection("run-one"):
            pass
        # Dagster's own code made the one blank file; both runs' files are copies of it.
        assert len(inits) == 1 and ".blank" in inits[0]
        assert _schema(tmp_path / "pooled" / "run-one.db") == _schema(tmp_path / "stock" / "run-one.db")
        assert _schema(tmp_path / "pooled" / "run-two.db") == _schema(tmp_path / "stock" / "run-one.db")
        # Dagster lists runs by the *.db files of the folder: the blank file is not one of them.
        assert sorted(storage.get_all_run_ids()) == ["run-one", "run-two"]
        assert not list((tmp_path / "pooled").glob(".*.tmp"))
    finally:
        storage.dispose()
        stock.dispose()


def test_an_existing_run_file_is_opened_as_it_is(tmp_path: Path):
    made_by_dagster = SqliteEventLogStorage(str(tmp_path))
    with made_by_dagster.run_connection("earlier") as conn:
        conn.exec_driver_sql("INSERT INTO event_logs (run_id, event) VALUES ('earlier', '{}')")
    made_by_dagster.dispose()
    storage = PooledSqliteEventLogStorage(str(tmp_path))
    try:
        with storage.run_connection("earlier") as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM event_logs").scalar() == 1
        assert not (tmp_path / ".blank").exists()  # nothing to copy: no blank file made
    finally:
        storage.dispose()
