"""SQL lives in warehouse/sql/*.sql, loaded by warehouse/sql_files.py: not in the product's Python.

Every string literal of every product module (gpuprice/, scrapers/, warehouse/, models/, reports/,
pipelines/; f-strings included, docstrings excluded) is read with the parser (no import runs); one
that starts like a SQL statement fails the test unless its module is listed in ``REMAINING`` with
exactly that many. The list only shrinks: a statement moved into a file lowers its count (and the
test asks for the new number), a new one fails. (bench/, the benchmarks, is not product code.)
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import duckdb
import pytest

from gpuprice.warehouse.sql_files import _VALUE, fill, quote_identifier, quote_literal, sql, statement

ROOT = Path(__file__).resolve().parent.parent
WAREHOUSE = ROOT / "warehouse"
SQL_DIR = WAREHOUSE / "sql"
# The product's folders (pyproject's package mapping).
PRODUCT = ("gpuprice", "scrapers", "warehouse", "models", "reports", "pipelines")

# What starts a SQL statement (upper case, as the product writes SQL; prose says "a SELECT").
STATEMENT = re.compile(
    r"^\s*(?:"
    r"SELECT\s+\S|WITH\s+\w+(?:\([^)]*\))?\s+AS\s*\(|INSERT\s+INTO|UPDATE\s+\w+\s|DELETE\s+FROM"
    r"|CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\s+)?(?:TABLE|VIEW|SCHEMA|MACRO|INDEX|SEQUENCE)"
    r"|ALTER\s+TABLE|DROP\s+(?:TABLE|VIEW|SCHEMA|MACRO)|COPY\s|ATTACH\s|DETACH\s|USE\s|SET\s+\w+\s*="
    r"|LOAD\s|INSTALL\s|CHECKPOINT|BEGIN|COMMIT|ROLLBACK|PRAGMA\s|EXPORT\s|IMPORT\s|CALL\s+\w+\("
    r")"
)

# Statements still written in Python, per module: none. A module listed here would need a
# statement that cannot live in a .sql file; every one so far could.
REMAINING: dict[str, int] = {}


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


def product_modules() -> list[Path]:
    """Every Python module of the product (not warehouse/sql/, which holds none)."""
    return sorted(
        path
        for folder in PRODUCT
        for path in (ROOT / folder).rglob("*.py")
        if "sql" not in path.relative_to(ROOT).parts[:-1] and "__pycache__" not in path.parts
    )


def test_no_new_sql_string_in_the_products_python() -> None:
    found = {
        str(path.relative_to(ROOT)): sql_literals(path)
        for path in product_modules()
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
        "con.execute(f\"CALL ducklake_expire_snapshots('{alias}')\")",
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


# A sample value of each kind of value placeholder (statement()), to parse a file with.
SAMPLES: dict[str, object] = {
    "literal": "it's",
    "literals": ["a", "b'c"],
    "identifier": "t",
    "identifiers": ["a", "b"],
    "boolean": True,
}


@pytest.mark.parametrize("name", sql_files())
def test_every_sql_file_loads_and_parses(name: str) -> None:
    """Each file fills its placeholders (an unknown one raises) and is SQL DuckDB can parse."""
    values = {key: SAMPLES[kind] for kind, key, _ in _VALUE.findall(sql(name))}
    statements = duckdb.extract_statements(statement(name, **values))
    assert statements, name


def test_placeholders_fill_and_an_unknown_one_is_an_error() -> None:
    assert (
        fill("SELECT 1 WHERE source IN {scraped_sources}") == "SELECT 1 WHERE source IN ('scrape', 'archive')"
    )
    assert fill("SELECT {'status': 1}") == "SELECT {'status': 1}"  # a struct literal is no placeholder
    with pytest.raises(KeyError, match="unknown placeholder"):
        fill("SELECT {no_such_thing}")


def test_column_placeholders_are_the_schemas_columns() -> None:
    from gpuprice.warehouse.tables import PROVIDER_RUN_COLUMNS

    assert fill("({columns:provider_runs})") == f"({', '.join(PROVIDER_RUN_COLUMNS)})"
    assert fill("({markers:provider_runs})") == f"({', '.join('?' * len(PROVIDER_RUN_COLUMNS))})"
    with pytest.raises(KeyError):
        fill("{columns:no_such_table}")


HOSTILE_PATHS = [
    "/tmp/it's here/warehouse.duckdb",
    "/tmp/x' AS gpuprice; DETACH gpuprice; --/a.duckdb",
    "/tmp/''/{identifier:alias}/a.duckdb",
    "/tmp/back\\slash\n'newline/a.duckdb",
]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_a_hostile_path_stays_one_string_literal(path: str) -> None:
    """A path with quotes (or placeholder text, newlines) is one literal: DuckDB parses the
    statement as one ATTACH whose path is exactly the value given."""
    text = statement("session/attach_published_copy", path=path)
    parsed = duckdb.extract_statements(text)
    assert [s.type.name for s in parsed] == ["ATTACH", "SET"]  # the ATTACH, then USE
    assert quote_literal(path) in parsed[0].query
    con = duckdb.connect()
    assert con.execute(f"SELECT {quote_literal(path)}").fetchone() == (path,)


def test_a_hostile_path_reaches_duckdb_whole(tmp_path: Path) -> None:
    """A database whose folder name holds a quote is attached and used by that path."""
    folder = tmp_path / "it's; DROP TABLE t; --"
    folder.mkdir()
    made = duckdb.connect(str(folder / "copy.duckdb"))
    made.execute("CREATE TABLE t AS SELECT 42 AS answer")
    made.close()
    con = duckdb.connect()
    con.execute(statement("session/attach_published_copy", path=str(folder / "copy.duckdb")))
    assert con.execute("SELECT answer FROM t").fetchone() == (42,)
    with pytest.raises(duckdb.Error, match="it's; DROP TABLE t"):
        con.execute(statement("session/load_extension", path=str(folder / "none.duckdb_extension")))


@pytest.mark.parametrize("name", ["x; DROP TABLE t", "t--", "a b", "1t", "t.u", 'x"y', "", "main.t", "t)"])
def test_a_name_that_is_no_identifier_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a SQL identifier"):
        statement("view_state/drop_staged", staged=name)
    with pytest.raises(ValueError, match="not a SQL identifier"):
        quote_identifier("provider", alias=name or "p q")
    with pytest.raises(ValueError, match="not a SQL identifier"):
        statement("writes/insert_frame", table="price_snapshots", columns=["provider", name])


def test_value_placeholders_are_checked() -> None:
    assert statement("view_state/drop_staged", staged="_staged_t") == "DROP TABLE IF EXISTS main._staged_t\n"
    with pytest.raises(KeyError, match="needs a value"):
        statement("view_state/drop_staged")
    with pytest.raises(KeyError, match="no placeholder for other"):
        statement("view_state/drop_staged", staged="t", other="u")
    with pytest.raises(ValueError, match="non-empty list"):
        statement("writes/insert_frame", table="t", columns=[])
    with pytest.raises(ValueError, match="list"):
        statement("writes/insert_frame", table="t", columns="provider")  # a string is no list
    with pytest.raises(ValueError, match="True or False"):
        statement("lake/attach", catalog="c", alias="lake", data_path="/d/", read_only="false")
    text = statement("session/guard_published_copy", allowed=[], memory_limit="512MB")
    assert "SET allowed_directories = [];" in text
    assert (
        statement("writes/merge_insert", key=("provider", "sku")).count(
            "row(p.provider, p.sku) IS NOT DISTINCT FROM row(i.provider, i.sku)"
        )
        == 1
    )
