"""SQL lives in warehouse/sql/*.sql, loaded by warehouse/sql_files.py: not in the warehouse's Python.

Every string literal of every warehouse module (f-strings included, docstrings excluded) is read
with the parser (no import runs); one that starts like a SQL statement fails the test unless its
module is listed in ``REMAINING`` with exactly that many. The list only shrinks: a statement
moved into a file lowers its count (and the test asks for the new number), a new one fails.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import duckdb
import pytest

from gpuprice.warehouse.sql_files import fill, sql

ROOT = Path(__file__).resolve().parent.parent
WAREHOUSE = ROOT / "warehouse"
SQL_DIR = WAREHOUSE / "sql"

# What starts a SQL statement (upper case, as the product writes SQL; prose says "a SELECT").
STATEMENT = re.compile(
    r"^\s*(?:"
    r"SELECT\s+\S|WITH\s+\w+(?:\([^)]*\))?\s+AS\s*\(|INSERT\s+INTO|UPDATE\s+\w+\s|DELETE\s+FROM"
    r"|CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\s+)?(?:TABLE|VIEW|SCHEMA|MACRO|INDEX|SEQUENCE)"
    r"|ALTER\s+TABLE|DROP\s+(?:TABLE|VIEW|SCHEMA|MACRO)|COPY\s|ATTACH\s|DETACH\s|USE\s|SET\s+\w+\s*="
    r"|LOAD\s|INSTALL\s|CHECKPOINT|BEGIN|COMMIT|ROLLBACK|PRAGMA\s|EXPORT\s|IMPORT\s"
    r")"
)

# Statements still written in Python, per module. Lower a count when a statement moves into
# warehouse/sql/; never raise one.
REMAINING: dict[str, int] = {
    # session and engine settings whose value is a path, a size or an alias (SET, ATTACH, LOAD,
    # USE, COPY ... TO: DuckDB binds no parameters there), one-line each
    "warehouse/connection.py": 5,
    "warehouse/lake.py": 6,
    "warehouse/sqlguard.py": 7,
    # publishing: CHECKPOINT, ATTACH/COPY/DETACH of the copy, the Parquet export's COPY and count;
    # the ATTACH of the previous copy to update (a path)
    "warehouse/publish.py": 8,
    # incremental publishing: ATTACH of the scratch database (a path, twice), and the copy's
    # unpartitioned tables replaced one by one (table names read from duckdb_tables())
    "warehouse/publish_delta.py": 4,
    # one-line DDL over view and table names (create a view from its file, store a view sorted)
    "warehouse/views.py": 5,
    # statements built from column tuples: the frame insert and provider_runs' insert
    "warehouse/writes.py": 2,
    # the merge of imported history by its natural key (merge_by_key: key and compared columns
    # are arguments) and the bundled public reports' insert by their key
    "warehouse/history_writes.py": 6,
    # the history command's nothing-current query (moving with that command's rework)
    "warehouse/price_series.py": 1,
}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def sql_literals(path: Path) -> list[str]:
    """The string literals of ``path`` that start like a SQL statement (f-string holes as ``{}``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    inside_fstring: set[int] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                inside_fstring.add(id(value))
                parts.append(value.value if isinstance(value, ast.Constant) else "{}")
            text = "".join(str(p) for p in parts)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in skip or id(node) in inside_fstring:
                continue
            text = node.value
        else:
            continue
        if STATEMENT.match(text):
            found.append(" ".join(text.split())[:80])
    return found


def warehouse_modules() -> list[Path]:
    return sorted(p for p in WAREHOUSE.rglob("*.py") if "sql" not in p.relative_to(WAREHOUSE).parts[:-1])


def test_no_new_sql_string_in_the_warehouse_python() -> None:
    found = {
        str(path.relative_to(ROOT)): sql_literals(path)
        for path in warehouse_modules()
        if path.name != "sql_files.py"
    }
    counts = {module: len(statements) for module, statements in found.items() if statements}
    assert counts == REMAINING, "\n".join(
        f"{module}: {statement}" for module, statements in found.items() for statement in statements
    )


@pytest.mark.parametrize(
    "text",
    [
        'con.execute("SELECT count(*) FROM t")',
        'con.execute(f"DELETE FROM {table} WHERE provider = ?")',
        'q = """\n    WITH newest AS (SELECT 1)\n    SELECT * FROM newest"""',
        'con.execute("CREATE OR REPLACE VIEW main.x AS SELECT 1")',
        'con.execute("INSERT INTO quarantine VALUES (?, ?)")',
    ],
)
def test_the_guard_sees_sql_strings(tmp_path: Path, text: str) -> None:
    module = tmp_path / "m.py"
    module.write_text(f'"""A module that says SELECT in its docstring."""\n{text}\n')
    assert len(sql_literals(module)) == 1


def test_the_guard_lets_prose_and_names_pass(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""SELECT in a docstring."""\n'
        'ALLOWED = "one SELECT (WITH, FROM-first) or EXPLAIN of one"\n'
        'kinds = ("SELECT", "EXPLAIN")\n'
        'table = "price_snapshots"\n'
    )
    assert sql_literals(module) == []


def sql_files() -> list[str]:
    return sorted(str(p.relative_to(SQL_DIR).with_suffix("")) for p in SQL_DIR.rglob("*.sql"))


@pytest.mark.parametrize("name", sql_files())
def test_every_sql_file_loads_and_parses(name: str) -> None:
    """Each file fills its placeholders (an unknown one raises) and is SQL DuckDB can parse."""
    statements = duckdb.extract_statements(sql(name))
    assert statements, name


def test_placeholders_fill_and_an_unknown_one_is_an_error() -> None:
    assert (
        fill("SELECT 1 WHERE source IN {scraped_sources}") == "SELECT 1 WHERE source IN ('scrape', 'archive')"
    )
    assert fill("SELECT {'status': 1}") == "SELECT {'status': 1}"  # a struct literal is no placeholder
    with pytest.raises(KeyError, match="unknown placeholder"):
        fill("SELECT {no_such_thing}")
