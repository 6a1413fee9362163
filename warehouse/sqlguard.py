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
  auto-loading is off; the configuration is locked so a query cannot switch any of it back on.
  Every allowed directory is absolute and inside the home: DuckDB adds its temp folder to the
  allowed directories, and its default is the relative ``.tmp`` of the working folder (which may
  lead anywhere), so the temp folder is set to one inside the home; a folder holding a symlink
  is not allowed at all (DuckDB compares path text, it does not resolve links);
- expressions nested deeper than MAX_NESTING are refused before the tree is read (one line, not
  a RecursionError);
- a statement timeout (the connection is interrupted; the CLI applies the same deadline to its
  output), a row cap and a byte cap bound time and the result's size;
- memory is bounded before a value is built, not after: DuckDB's memory limit (MEMORY_LIMIT) also
  refuses one huge value (``repeat('x', 500000000)`` fails at its 512 MiB allocation), and while
  the query runs the process's data segment may grow by at most PROCESS_HEADROOM plus room for
  the result (RLIMIT_DATA), for what DuckDB does not count; either is one line.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from gpuprice.errors import BadInput
from gpuprice.warehouse.connection import check_database_file
from gpuprice.warehouse.sql_files import sql, statement

ALLOWED = "one SELECT (WITH, FROM-first, DESCRIBE, SUMMARIZE and SHOW included) or EXPLAIN of one"
# Functions that act rather than compute, refused anywhere in the tree (lower-case names).
REFUSED_FUNCTIONS = frozenset(
    {"checkpoint", "force_checkpoint", "query", "query_table", "sqlite_attach", "install", "load"}
)
# DuckDB's own working memory (beyond it, sorts and joins spill to SQL_TEMP_FOLDER); at 1 GB a
# 500 MB string was built, then copied out (2.1 GB peak); at 512 MB DuckDB refuses to allocate it.
MEMORY_LIMIT = "512MB"
# How much the process's data segment may grow while a query runs (RLIMIT_DATA), beyond room for
# the result (4 bytes per byte of the byte cap: Python's rows and the formatted text).
PROCESS_HEADROOM = 1 << 30
FETCH_BATCH = 1_000
# Nesting of the serialised parse tree (JSON objects and arrays) admitted: about two levels per
# level of expression, so ~200 nested expressions; Python's JSON reader recurses once per level.
MAX_TREE_DEPTH = 400
MAX_NESTING = MAX_TREE_DEPTH // 2
SQL_TEMP_FOLDER = ".sql-tmp"  # DuckDB's spill folder for gpuprice sql, inside the home
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_EXPLAIN_PREFIX = re.compile(r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*EXPLAIN\s+(?:ANALY[SZ]E\s+)?", re.I | re.S)


def open_guarded(analytics_file: Path, exports_dir: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory session with the published copy attached read-only as the default catalog."""
    check_database_file(analytics_file, "published copy")
    home = analytics_file.resolve().parent
    temp = home / SQL_TEMP_FOLDER
    # Spilling is off (an empty temp folder) when the folder is not a plain folder of the home.
    spill = str(temp) if not temp.is_symlink() and (temp.is_dir() or not temp.exists()) else ""
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False, "temp_directory": spill})
    con.execute(statement("session/attach_published_copy", path=str(analytics_file)))
    allowed = [f"{d}/" for d in allowed_directories(home, exports_dir)]
    con.execute(statement("session/guard_published_copy", allowed=allowed, memory_limit=MEMORY_LIMIT))
    return con


def allowed_directories(home: Path, exports_dir: Path) -> list[Path]:
    """The folders ``gpuprice sql`` may read files from: the exports folder, absolute, when it
    is inside the home and nothing in it is a symlink (DuckDB checks path text, so a link in an
    allowed folder would lead out of it); else none."""
    folder = exports_dir.resolve()
    if exports_dir.is_symlink() or not folder.is_dir() or not folder.is_relative_to(home):
        return []
    for root, dirs, files in os.walk(folder):
        if any(os.path.islink(os.path.join(root, name)) for name in (*dirs, *files)):
            return []
    return [folder]


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
    row = con.execute(sql("queries/parse_tree"), {"text": text}).fetchone()
    if row and tree_depth(row[0]) > MAX_TREE_DEPTH:
        raise BadInput(
            f"the query nests expressions more than about {MAX_NESTING} levels deep, the limit of gpuprice sql; "
            "simplify it"
        )
    tree: dict[str, Any] = json.loads(row[0]) if row else {"error": True}
    statements = tree.get("statements")
    if tree.get("error") or not isinstance(statements, list) or len(statements) != 1:
        return None
    return tree


def tree_depth(serialised: str) -> int:
    """How deeply the objects and arrays of a JSON text nest (without parsing it)."""
    depth = deepest = 0
    for char in _JSON_STRING.sub("", serialised):
        if char in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "}]":
            depth -= 1
    return deepest


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
    """Columns and rows of an admitted statement, read under the timeout and the caps, and the
    moment (``time.monotonic``) by which the output must be written too."""

    def __init__(self, columns: list[str], rows: list[tuple], deadline: float = math.inf) -> None:
        self.columns = columns
        self.rows = rows
        self.deadline = deadline

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.rows)


def run_query(
    con: duckdb.DuckDBPyConnection,
    query: str,
    *,
    timeout_s: float,
    row_cap: int,
    byte_cap: int = 64 * 1024 * 1024,
) -> QueryResult:
    """Run one admitted statement; BadInput (one line) on refusal, failure, timeout or too many
    rows or bytes. The time limit counts from the start: the caller writes the output by
    ``QueryResult.deadline``."""
    deadline = time.monotonic() + timeout_s
    try:
        text = check_read_only(con, query)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise BadInput(
            f"the query nests expressions too deeply (limit: about {MAX_NESTING} levels)"
        ) from None
    limit_s, cap = timeout_s, row_cap
    timer = threading.Timer(max(0.0, deadline - time.monotonic()), con.interrupt)
    timer.daemon = True
    timer.start()
    try:
        with bounded_data_segment(PROCESS_HEADROOM + 4 * byte_cap):
            return _fetch(con, text, deadline, cap, byte_cap)
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
            f"the query needs more memory than gpuprice sql allows ({PROCESS_HEADROOM >> 20:,} MB beyond the"
            f" result); narrow it or aggregate (at most {cap:,} rows are returned)"
        ) from None
    except duckdb.Error as exc:
        raise BadInput(f"query failed: {_first_line(exc)}") from None
    finally:
        timer.cancel()


def _fetch(
    con: duckdb.DuckDBPyConnection, text: str, deadline: float, cap: int, byte_cap: int
) -> QueryResult:
    """Run ``text`` and read its rows in batches, stopping at the row and byte caps."""
    result = con.execute(text)
    columns = [d[0] for d in result.description or []]
    rows: list[tuple] = []
    size = 0
    while True:
        batch = result.fetchmany(FETCH_BATCH)
        if not batch:
            break
        rows.extend(batch)
        size += sum(value_bytes(v) for row in batch for v in row)
        if size > byte_cap:
            raise BadInput(
                f"the query returns more than {byte_cap / 1e6:,.0f} MB, the limit of gpuprice sql; "
                "narrow it or aggregate (GPUPRICE_SQL_MAX_BYTES raises the limit)"
            )
        if len(rows) > cap:
            raise BadInput(
                f"the query returns more than {cap:,} rows, the limit of gpuprice sql; "
                "narrow it (WHERE, LIMIT) or aggregate (GPUPRICE_SQL_MAX_ROWS raises the limit)"
            )
    return QueryResult(columns, rows, deadline)


_VM_DATA = re.compile(r"^VmData:\s+(\d+) kB", re.M)


@contextlib.contextmanager
def bounded_data_segment(headroom: int) -> Iterator[None]:
    """While the block runs, the process's data segment (heap and private writable mappings:
    DuckDB's and Python's allocations) may grow by at most ``headroom`` bytes; an allocation
    beyond fails (DuckDB: OutOfMemoryException, Python: MemoryError). The previous limit is
    restored after. Where the platform has no RLIMIT_DATA or /proc, the block runs unbounded."""
    try:
        import resource

        status = Path("/proc/self/status").read_text()
        match = _VM_DATA.search(status)
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    except (ImportError, OSError, AttributeError):
        yield
        return
    if match is None:
        yield
        return
    limit = int(match.group(1)) * 1024 + headroom
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft != resource.RLIM_INFINITY and soft < limit:  # a tighter limit already set stays
        yield
        return
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def value_bytes(value: Any) -> int:
    """About how many bytes one value takes in the output (text and blobs by length)."""
    if isinstance(value, (str, bytes, bytearray)):
        return len(value)
    if isinstance(value, (list, tuple, dict)):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        return sum(value_bytes(k) + value_bytes(v) for k, v in items)
    return 8


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
