"""Writing machine and terminal output safely: one implementation for every command.

CSV goes through :func:`gpuprice.commands.csv_out.csv_writer` (``\n`` line endings).

- JSON is built whole before anything is written (an error never leaves half a document), with
  NaN and infinities written as null (JSON has no such numbers) and bytes, UUIDs, decimals, dates
  and intervals given their obvious JSON forms.
- CSV text cells that a spreadsheet would run as a formula (starting ``=``, ``+``, ``-``, ``@``,
  tab or carriage return) are prefixed with an apostrophe (the OWASP advice); numbers are
  written as numbers, so a negative price stays a number; control characters are escaped as
  for a terminal (a CSV is read in one as often as in a spreadsheet).
- JSON escapes every control and non-ASCII character (``\u001b``) by construction.
- Text for a terminal has control characters (ESC, BEL, bidirectional overrides such as RLO, ...)
  shown as ``\\x1b``-style escapes, so a scraped page can never move the cursor, retitle the
  window or reorder what people read.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
import sys
import uuid
from collections.abc import Iterable, Sequence
from typing import IO, Any, TextIO

from gpuprice.commands.csv_out import csv_writer

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def jsonable(value: Any) -> Any:
    """A JSON-ready form of one value (recursing into lists and dicts)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return float(value) if value.is_finite() else None
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.days if value.seconds == 0 and value.microseconds == 0 else value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    return str(value)


def dumps_json(data: Any, *, indent: int | None = 1) -> str:
    """``data`` as strict JSON text (never NaN/Infinity)."""
    return json.dumps(jsonable(data), indent=indent, allow_nan=False)


def write_json(data: Any, *, indent: int | None = 1, stream: IO[str] | None = None) -> None:
    """Write ``data`` as one strict JSON document and a newline, built whole first."""
    text = dumps_json(data, indent=indent)
    (stream or sys.stdout).write(text + "\n")


def csv_cell(value: Any) -> Any:
    """One CSV cell: text a spreadsheet would evaluate is prefixed with an apostrophe."""
    value = jsonable(value)
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + terminal_safe(value)
    if isinstance(value, str):
        return terminal_safe(value)
    if isinstance(value, (dict, list)):
        return csv_cell(json.dumps(value))
    return value


def write_csv(header: Sequence[str], rows: Iterable[Sequence[Any]], *, stream: TextIO | None = None) -> None:
    """A header and rows as CSV, every cell through :func:`csv_cell`."""
    writer = csv_writer(stream)
    writer.writerow([csv_cell(h) for h in header])
    writer.writerows([csv_cell(v) for v in row] for row in rows)


_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ufff9-\ufffb]"
)


def terminal_safe(text: object) -> str:
    """``text`` with control and bidi-control characters escaped (tab and newline kept)."""
    return _CONTROL.sub(_escape, str(text))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
