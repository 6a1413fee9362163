"""The benchmarks keep their SQL in bench/sql/*.sql, as the product does (tests/test_sql_files.py)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from bench.sql_files import SQL_DIR, bench_sql
from tests.test_sql_files import sql_literals

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.parametrize("module", sorted(p.name for p in BENCH.glob("*.py")))
def test_no_sql_string_in_the_bench_python(module: str) -> None:
    assert sql_literals(BENCH / module) == []


@pytest.mark.parametrize(
    "name", sorted(str(p.relative_to(SQL_DIR).with_suffix("")) for p in SQL_DIR.rglob("*.sql"))
)
def test_every_bench_sql_file_parses(name: str) -> None:
    assert duckdb.extract_statements(bench_sql(name)), name
