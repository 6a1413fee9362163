"""Read-only SQL for analysts: the published copy, with every way out of it closed.

Layers, each enough on its own for the writes it covers:
- the statement is parsed by DuckDB's own parser; exactly one statement is admitted, and only
  when it is a plain SELECT tree (``json_serialize_sql`` serialises SELECT trees only, so COPY,
  ATTACH, PRAGMA, SET, INSTALL/LOAD, CALL and the rest are refused by what they are, not by how
  they are spelled). ``EXPLAIN``/``EXPLAIN ANALYZE`` of such a tree is admitted (ANALYZE runs
  the SELECT, which cannot write); of anything else it is refused, since ANALYZE executes it.
- table and scalar functions with side effects (a checkpoint, a query string parsed at run
  time) are refused by name wherever they occur in the tree;
- the published copy is attached READ_ONLY; external access is off except reading files under
  the exports folder (the Parquet exports), which no admitted statement can write; extension
  auto-loading is off; the configuration is locked so a query cannot switch any of it back on;
- a statement timeout (the connection is interrupted) and a row cap bound time and memory.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from gpuprice.errors import BadInput
from gpuprice.warehouse.connection import check_database_file, sql_literal

ALLOWED = "one SELECT (WITH, FROM-first, DESCRIBE, SUMMARIZE and SHOW included) or EXPLAIN of one"
# Functions that act rather than compute, refused anywhere in the tree (lower-case names).
REFUSED_FUNCTIONS = frozenset(
    {"checkpoint", "force_checkpoint", "query", "query_table", "sqlite_attach", "install", "load"}
)
MEMORY_LIMIT = "1GB"  # DuckDB's own working memory; results are capped separately
FETCH_BATCH = 10_000
_EXPLAIN_PREFIX = re.compile(r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*EXPLAIN\s+(?:ANALY[SZ]E\s+)?", re.I | re.S)


def open_guarded(analytics_file: Path, exports_dir: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory session with the published copy attached read-only as the default catalog."""
    check_database_file(analytics_file, "published copy")
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    con.execute(f"ATTACH '{sql_literal(str(analytics_file))}' AS gpuprice (READ_ONLY)")
    con.execute("USE gpuprice")
    con.execute("SET autoload_known_extensions = false")
    con.execute(f"SET allowed_directories = ['{sql_literal(str(exports_dir.resolve()))}/']")
    con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def check_read_only(con: duckdb.DuckDBPyConnection, query: str) -> str:
    """The statement to run (one SELECT tree, or EXPLAIN of one); BadInput with a one-line reason."""
    try:
        statements = con.extract_statements(query)
    except duckdb.Error as exc:
        raise BadInput(f"SQL does not parse: {_first_line(exc)}") from None
    if not statements:
        raise BadInput("empty SQL query")
    for other in statements:
        if other.type.name not in ("SELECT", "EXPLAIN"):
            raise BadInput(
                f"gpuprice sql is read-only: {other.type.name} statements are refused (allowed: {ALLOWED})"
            )
    if len(statements) > 1:
        raise BadInput(f"gpuprice sql runs one statement, this has {len(statements)} (allowed: {ALLOWED})")
    statement = statements[0]
    kind = statement.type.name
    text = statement.query
    if kind == "EXPLAIN":
        prefix = _EXPLAIN_PREFIX.match(text)
        inner = text[prefix.end() :] if prefix else ""
        if not inner.strip() or _select_tree(con, inner) is None:
            raise BadInput(
                f"gpuprice sql is read-only: EXPLAIN of anything but a SELECT is refused (allowed: {ALLOWED})"
            )
        tree = _select_tree(con, inner)
    elif kind == "SELECT":
        tree = _select_tree(con, text)
        if tree is None:  # PRAGMA and a few others are SELECT to extract_statements, not to the serialiser
            raise BadInput(f"gpuprice sql is read-only: {_first_word(text)} is refused (allowed: {ALLOWED})")
    else:  # pragma: no cover - every other kind was refused above
        raise BadInput(f"gpuprice sql is read-only: {kind} statements are refused (allowed: {ALLOWED})")
    refused = sorted(_function_names(tree) & REFUSED_FUNCTIONS)
    if refused:
        raise BadInput(f"gpuprice sql is read-only: function {refused[0]}() is refused (allowed: {ALLOWED})")
    return text


def _select_tree(con: duckdb.DuckDBPyConnection, text: str) -> Any:
    """DuckDB's parse tree of ``text`` when it is exactly one SELECT statement, else None."""
    row = con.execute("SELECT json_serialize_sql(?)", [text]).fetchone()
    tree: dict[str, Any] = json.loads(row[0]) if row else {"error": True}
    statements = tree.get("statements")
    if tree.get("error") or not isinstance(statements, list) or len(statements) != 1:
        return None
    return tree


def _function_names(node: Any) -> set[str]:
    names: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            name = item.get("function_name")
            if isinstance(name, str):
                names.add(name.lower())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return names


def _first_word(text: str) -> str:
    words = re.findall(r"[A-Za-z_]+", text)
    return words[0].upper() if words else "this statement"


class QueryResult:
    """Columns and rows of an admitted statement, read under the timeout and the row cap."""

    def __init__(self, columns: list[str], rows: list[tuple]) -> None:
        self.columns = columns
        self.rows = rows

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.rows)


def run_query(
    con: duckdb.DuckDBPyConnection,
    query: str,
    *,
    timeout_s: float,
    row_cap: int,
) -> QueryResult:
    """Run one admitted statement; BadInput (one line) on refusal, failure, timeout or too many rows."""
    text = check_read_only(con, query)
    limit_s, cap = timeout_s, row_cap
    timer = threading.Timer(limit_s, con.interrupt)
    timer.daemon = True
    timer.start()
    try:
        result = con.execute(text)
        columns = [d[0] for d in result.description or []]
        rows: list[tuple] = []
        while True:
            batch = result.fetchmany(FETCH_BATCH)
            if not batch:
                break
            rows.extend(batch)
            if len(rows) > cap:
                raise BadInput(
                    f"the query returns more than {cap:,} rows, the limit of gpuprice sql; "
                    "narrow it (WHERE, LIMIT) or aggregate (GPUPRICE_SQL_MAX_ROWS raises the limit)"
                )
    except duckdb.InterruptException:
        raise BadInput(
            f"the query was stopped after {limit_s:g} s, the time limit of gpuprice sql; "
            "narrow it or raise GPUPRICE_SQL_TIMEOUT"
        ) from None
    except duckdb.PermissionException as exc:
        raise BadInput(
            f"refused: {_first_line(exc)} (only the Parquet exports can be read as files)"
        ) from None
    except duckdb.OutOfMemoryException:
        raise BadInput(
            f"the query needs more than {MEMORY_LIMIT} of working memory; narrow it or aggregate"
        ) from None
    except MemoryError:
        raise BadInput(
            f"the result does not fit in memory; narrow it (at most {cap:,} rows are returned)"
        ) from None
    except duckdb.Error as exc:
        raise BadInput(f"query failed: {_first_line(exc)}") from None
    finally:
        timer.cancel()
    return QueryResult(columns, rows)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
