"""The memory each catalog GPU is sold with, for parsers whose source states only what the driver
reports (``scrapers/data/gpu_memory.csv``).

A host's ``nvidia-smi`` shows a card's memory less what ECC and the driver reserve: 46068 MiB (45
GiB) for an L40S sold with 48 GB, 143771 MiB (140 GiB) for an H200 sold with 141 GB, 275040 MiB (269
GiB) for a B300 sold with 288 GB. Every other source states the size the card is sold with, and so
does the offer's ``vram_gb``. The table mirrors the GPU catalog's ``memory_gb`` (the catalog lives in
``models``, which scrapers may not import); tests/test_parser_vastai.py checks that the two agree.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path

GPU_MEMORY_CSV = Path(__file__).resolve().parent / "data" / "gpu_memory.csv"


@functools.cache
def sold_memory_table() -> dict[str, float]:
    """slug -> GB as sold, from the mirror of the catalog."""
    with GPU_MEMORY_CSV.open(newline="", encoding="utf-8") as handle:
        rows = csv.DictReader(line for line in handle if not line.startswith("#"))
        return {row["slug"]: float(row["memory_gb"]) for row in rows}


def sold_memory_gb(slug: str) -> float | None:
    """The memory the catalog GPU ``slug`` is sold with; None for ``unknown`` or a slug not listed."""
    return sold_memory_table().get(slug)
