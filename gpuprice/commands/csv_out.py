"""The one CSV writer of the CLI: ``\\n`` line endings (the csv module's default is ``\\r\\n``),
so output pipes cleanly into Unix tools and compares equal to files written on this system."""

from __future__ import annotations

import csv
import sys
from typing import Any, TextIO


def csv_writer(stream: TextIO | None = None) -> Any:
    """A ``csv.writer`` over ``stream`` (default stdout) that ends rows with ``\\n``."""
    return csv.writer(sys.stdout if stream is None else stream, lineterminator="\n")
