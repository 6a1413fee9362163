"""A CLI run's steps share one warehouse connection (pipelines/run_connection.py), and give it up
when idle or after a failure, so the file is free for another writer between the run's steps."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from gpuprice.pipelines.instance import cli_instance
from gpuprice.pipelines.resources import WarehouseResource, default_resources
from gpuprice.pipelines.run_connection import SharedConnection, sharing_connection
from gpuprice.pipelines.runner import materialize_for_cli


def _opener(path: Path):
    @contextlib.contextmanager
    def open_file() -> Iterator[duckdb.DuckDBPyConnection]:
        con = duckdb.connect(str(path))
        try:
            yield con
        finally:
            con.close()

    return open_file


def _other_process_can_write(path: Path) -> bool:
    """Whether another process gets DuckDB's file lock right now."""
    code = f"import duckdb; duckdb.connect({str(path)!r}).execute('CREATE TABLE IF NOT EXISTS probe (x INT)')"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_lends_one_connection_to_consecutive_and_nested_uses(tmp_path: Path):
    path = tmp_path / "w.duckdb"
    shared = SharedConnection(str(path), idle_release_seconds=60)
    try:
        with shared.lend(_opener(path)) as first:
            first.execute("CREATE TABLE t (x INT)")
            with shared.lend(_opener(path)) as nested:
                assert nested is first
        with shared.lend(_opener(path)) as second:
            assert second is first
            second.execute("INSERT INTO t VALUES (1)")
        assert shared.opened == 1
    finally:
        shared.close()
    # Closed: the file is free and holds what was written.
    assert _other_process_can_write(path)
    assert duckdb.connect(str(path), read_only=True).execute("SELECT count(*) FROM t").fetchone() == (1,)


def test_an_idle_connection_is_closed_so_another_writer_gets_the_file(tmp_path: Path):
    path = tmp_path / "w.duckdb"
    shared = SharedConnection(str(path), idle_release_seconds=0.2)
    try:
        with shared.lend(_opener(path)) as con:
            con.execute("CREATE TABLE t (x INT)")
            assert not _other_process_can_write(path)  # held while in use
        time.sleep(1.0)
        assert _other_process_can_write(path)
        with shared.lend(_opener(path)) as con:  # the run goes on with a new connection
            assert con.execute("SELECT count(*) FROM probe").fetchone() == (0,)
        assert shared.opened == 2
    finally:
        shared.close()


def test_a_failed_use_gives_the_connection_up_and_leaves_no_transaction(tmp_path: Path):
    path = tmp_path / "w.duckdb"
    shared = SharedConnection(str(path), idle_release_seconds=60)
    try:
        with shared.lend(_opener(path)) as con:
            con.execute("CREATE TABLE t (x INT)")
        with pytest.raises(RuntimeError), shared.lend(_opener(path)) as con:
            con.execute("BEGIN TRANSACTION")
            con.execute("INSERT INTO t VALUES (1)")
            raise RuntimeError("step failed mid-transaction")
        with shared.lend(_opener(path)) as con:
            # A use that ends inside a transaction it opened has it rolled back, too.
            con.execute("BEGIN TRANSACTION")
            con.execute("INSERT INTO t VALUES (2)")
        with shared.lend(_opener(path)) as con:
            assert con.execute("SELECT count(*) FROM t").fetchone() == (0,)
            con.execute("INSERT INTO t VALUES (3)")  # autocommit again, not inside a left-over one
        assert shared.opened == 2
    finally:
        shared.close()
    assert duckdb.connect(str(path), read_only=True).execute("SELECT x FROM t").fetchall() == [(3,)]


@dg.asset
def first_writer(warehouse: WarehouseResource) -> None:
    with warehouse.open() as con:
        con.execute("CREATE OR REPLACE TABLE shared_probe AS SELECT 1 AS x")


@dg.asset(deps=[first_writer])
def second_writer(warehouse: WarehouseResource) -> None:
    with warehouse.session() as con, warehouse.open() as inner:
        assert inner is con
        con.execute("INSERT INTO shared_probe VALUES (2)")


def test_a_cli_run_opens_the_warehouse_once_for_all_its_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    opened: list[str] = []
    real_connect = WarehouseResource._connect

    def counting(self: WarehouseResource):
        opened.append(self.database)
        return real_connect(self)

    monkeypatch.setattr(WarehouseResource, "_connect", counting)
    instance = cli_instance(tmp_path)
    try:
        result, errors = materialize_for_cli(
            dg.AssetSelection.all(),
            resources=default_resources(tmp_path),
            instance=instance,
            label="probe",
            definitions=[first_writer, second_writer],
        )
    finally:
        instance.dispose()
    assert result.success and errors == []
    assert len(opened) == 1  # two steps, three uses: one connection
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True)  # and closed after
    assert con.execute("SELECT x FROM shared_probe ORDER BY x").fetchall() == [(1,), (2,)]


def test_outside_a_run_each_use_has_its_own_connection(tmp_path: Path):
    warehouse = WarehouseResource.for_home(tmp_path)
    with warehouse.open() as first:
        first.execute("CREATE TABLE t (x INT)")
    with warehouse.open() as second:
        assert second is not first
    with sharing_connection(str(tmp_path / "other.duckdb")), warehouse.open() as third:
        assert third is not first  # sharing another database changes nothing here
