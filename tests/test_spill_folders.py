"""Two database instances spilling beside one warehouse (the publish's warehouse connection and
its scratch database) must not share DuckDB's temp files: with one ``temp_directory`` the second
writes the same file names and the first to close deletes them, and the other then fails reading
its own spilled pages (seen in a publish at 45 M rows, issue 38)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from gpuprice.warehouse.connection import limit_memory, spill_dir


def _spilling(path: Path) -> duckdb.DuckDBPyConnection:
    con = limit_memory(duckdb.connect(str(path)), spill_dir(tmp_warehouse(path)), "64MB")
    con.execute("SET preserve_insertion_order = false")
    con.execute("CREATE TEMP TABLE t AS SELECT range AS x, md5(range::VARCHAR) AS y FROM range(3000000)")
    return con


def tmp_warehouse(path: Path) -> Path:
    return path.with_name("warehouse.duckdb")


def test_each_instance_spills_to_a_folder_of_its_own(tmp_path: Path) -> None:
    first = _spilling(tmp_path / "a.duckdb")
    second = _spilling(tmp_path / "b.duckdb")
    try:
        folders = sorted(p.name for p in tmp_path.iterdir() if p.is_dir())
        assert len(folders) == 2 and all(f.startswith("warehouse.duckdb.tmp-") for f in folders), folders
        second.close()  # removes its own folder only
        assert first.execute("SELECT count(*), sum(length(y)) FROM t").fetchone() == (3_000_000, 96_000_000)
    finally:
        first.close()
    assert not [p for p in tmp_path.iterdir() if p.is_dir()]  # each instance removed its folder
