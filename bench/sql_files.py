"""The benchmarks' SQL, loaded by name: ``bench/sql/<name>.sql``.

As in the product (``gpuprice.warehouse.sql_files``), every statement a benchmark runs lives in
a ``.sql`` file; values are bound parameters and the only text filled in is the product's own
placeholders (``{name}``), filled by the product's ``fill``.
"""

from __future__ import annotations

import datetime as dt
import functools
from pathlib import Path
from typing import Any

from gpuprice.warehouse.sql_files import fill

SQL_DIR = Path(__file__).resolve().with_name("sql")


@functools.cache
def bench_sql(name: str) -> str:
    """The text of ``bench/sql/<name>.sql`` with its placeholders filled, read once."""
    return fill((SQL_DIR / f"{name}.sql").read_text(encoding="utf-8"), f"bench/sql/{name}.sql")


# The analysts' standard queries the warehouse figures time (bench/sql/standard/<name>.sql), and
# the GPU whose history they read: the most listed one, the heaviest one-GPU history.
HISTORY_GPU = "h100-sxm"


def standard_query_params(day: dt.date, gpu: str = HISTORY_GPU) -> dict[str, dict[str, Any]]:
    """Each standard query's name (its file under bench/sql/standard/) and its parameters."""
    return {
        "latest_prices": {},
        "price_history_one_gpu": {"gpu": gpu},
        "cheapest_by_gpu_one_date": {"day": day},
    }
