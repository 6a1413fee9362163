"""``--batch FILE.csv`` of ``gpuprice fit`` and ``gpuprice estimate``: one setup per CSV row.

Exists apart from the model options (model_options.py) because reading a CSV has its own rules:
headers are option names (a column that is no option is ignored with a note, a near-miss is an
error), an empty cell means the option's default (or the command line's value), and every row is
validated before anything is printed: one bad row is exit 2 with one line naming the file, the
line, the data row and, where one cell is to blame, its column ("runs.csv line 3 (row 2, column
gpu): unknown GPU 'A10X' ..."); no partial output, so a caller never pairs results with the
wrong rows.
"""

from __future__ import annotations

import csv
import difflib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import typer
from pydantic import BaseModel, ConfigDict

from gpuprice.commands.model_options import MODEL_OPTION_NAMES, parse_cell, setup_from_options
from gpuprice.commands.output import write_json
from gpuprice.errors import BadInput, read_text_input
from gpuprice.models.hf_config import config_path_in_table
from gpuprice.models.memory import TrainingSetup


class BatchRow(BaseModel):
    """One data row of a --batch CSV: its line number, its number among the data rows (1 = the
    first row after the header) and its non-empty cells by column name."""

    model_config = ConfigDict(frozen=True)

    path: Path
    line: int
    row: int
    values: dict[str, str]

    def where(self, message: str = "") -> str:
        """Where in the file, with the column whose cell the message quotes (when exactly one)."""
        quoted = [k for k, v in self.values.items() if repr(v) in message or (len(v) > 2 and v in message)]
        column = f", column {quoted[0]}" if len(quoted) == 1 else ""
        return f"{self.path} line {self.line} (row {self.row}{column})"

    def error(self, exc: BadInput) -> BadInput:
        return BadInput(f"{self.where(str(exc))}: {exc}")


def _normalize_header(name: str) -> str:
    return name.strip().lstrip("-").strip().lower().replace("-", "_").replace(" ", "_")


# How tables of measured runs (trainer arguments, benchmark CSVs) name some options. A column
# under one of these names is read as the option when the option's own column is absent, and
# stderr says so; without this, "num_gpus" would be ignored and every run read as one GPU.
# (A global "batch_size" is not the micro-batch, so it has no alias.)
COLUMN_ALIASES = {
    "num_gpus": "gpus",
    "n_gpus": "gpus",
    "gpu_count": "gpus",
    "per_device_train_batch_size": "micro_batch",
    "micro_batch_size": "micro_batch",
    "seq_length": "seq_len",
    "max_seq_length": "seq_len",
    "sequence_length": "seq_len",
    "gradient_checkpointing": "grad_checkpointing",
    "lora_r": "lora_rank",
    "attn_implementation": "attention",
}


def _read_aliases(path: Path, header: list[str], allowed: tuple[str, ...]) -> list[str]:
    """The header with aliased columns renamed to their option (when that option has no column of
    its own and the command takes it), each rename said on stderr."""
    renamed = list(header)
    for i, name in enumerate(header):
        option = COLUMN_ALIASES.get(name)
        if option and option in allowed and option not in header:
            renamed[i] = option
            typer.echo(f"{path}: reading column {name} as {option}", err=True)
    return renamed


def read_batch_csv(
    path: str | Path, allowed_columns: Iterable[str] = (*MODEL_OPTION_NAMES, "gpu")
) -> list[BatchRow]:
    """Rows of a --batch CSV, in file order. ``config`` paths are resolved relative to the CSV.

    Headers are option names (``seq_len`` or ``seq-len``). Unknown columns, ragged rows, broken
    quoting and files without data rows are BadInput naming the file and line."""
    path = Path(path)
    allowed = tuple(allowed_columns)
    text = read_text_input(path, "batch", encoding="utf-8-sig")
    if "\x00" in text:
        raise BadInput(
            f"{path}: not a text CSV (NUL byte at line {text[: text.index(chr(0))].count(chr(10)) + 1})"
        )
    reader = csv.reader(text.splitlines(keepends=True), strict=True)
    rows: list[BatchRow] = []
    header: list[str] | None = None
    try:
        for record in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in record):
                continue  # blank line
            if header is None:
                header = _read_aliases(path, [_normalize_header(c) for c in record], allowed)
                ignored = _check_header(path, line, header, allowed)
                if ignored:
                    typer.echo(
                        f"{path}: ignoring columns that are not options: {', '.join(ignored)}", err=True
                    )
                    header = ["" if name in ignored else name for name in header]
                continue
            if len(record) != len(header):
                raise BadInput(
                    f"{path} line {line}: expected {len(header)} fields like the header, got {len(record)}"
                )
            values = {k: v.strip() for k, v in zip(header, record) if k and v.strip()}
            if "config" in values:
                values["config"] = str(config_path_in_table(path, values["config"]))
            rows.append(BatchRow(path=path, line=line, row=len(rows) + 1, values=values))
    except csv.Error as exc:
        raise BadInput(f"{path} line {reader.line_num}: malformed CSV ({exc})") from None
    if header is None:
        raise BadInput(f"{path}: empty batch file (expected a header naming options, e.g. model,method)")
    if not rows:
        raise BadInput(f"{path}: no data rows after the header")
    return rows


# A column that is no option and no near-miss of one (a measured value, a source, notes: a table of
# measured runs carries them) is left out with a note on stderr; a near-miss ("methd") is an error.
_TYPO_CUTOFF = 0.75


def _check_header(path: Path, line: int, header: list[str], allowed: tuple[str, ...]) -> list[str]:
    """The header's columns that are not options (ignored); BadInput for a likely typo."""
    seen: set[str] = set()
    ignored = []
    for name in header:
        if not name:
            raise BadInput(f"{path} line {line}: empty column name in the header")
        if name not in allowed:
            close = difflib.get_close_matches(name, allowed, n=3, cutoff=_TYPO_CUTOFF)
            if close:
                raise BadInput(
                    f"{path} line {line}: unknown column {name!r}; did you mean {', '.join(close)}?"
                )
            ignored.append(name)
        if name in seen:
            raise BadInput(f"{path} line {line}: column {name!r} appears twice")
        seen.add(name)
    return ignored


def setup_from_batch_row(row: BatchRow, defaults: Mapping[str, Any] | None = None) -> TrainingSetup:
    """The setup of one CSV row; ``defaults`` (e.g. command-line options) fill empty cells.

    A model column in the CSV replaces a model given on the command line (and vice versa)."""
    try:
        cells = {k: parse_cell(k, v) for k, v in row.values.items() if k in MODEL_OPTION_NAMES}
        merged = {k: v for k, v in (defaults or {}).items() if v is not None and k in MODEL_OPTION_NAMES}
        if cells.keys() & {"model", "config", "params_b"}:
            for key in ("model", "config", "params_b"):
                merged.pop(key, None)
        merged.update(cells)
        return setup_from_options(**merged)
    except BadInput as exc:
        raise row.error(exc) from None


def run_batch(
    path: str | Path,
    options: Mapping[str, Any],
    row_result: Callable[[BatchRow, TrainingSetup], dict[str, Any]],
    allowed_columns: Iterable[str] = (*MODEL_OPTION_NAMES, "gpu"),
) -> None:
    """Validate every row first, then print one JSON line per row in file order.

    ``options`` (the command line) fill a row's empty cells; ``row_result`` turns a row and its
    setup into the command's result, and its BadInput is reported with the file and line."""
    results = []
    for row in read_batch_csv(path, allowed_columns):
        setup = setup_from_batch_row(row, options)
        try:
            results.append(row_result(row, setup))
        except BadInput as exc:
            raise row.error(exc) from None
    for result in results:
        write_json(result, indent=None)
