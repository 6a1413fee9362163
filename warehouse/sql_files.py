"""The product's SQL text that is not built in code: ``warehouse/sql/<group>/<name>.sql``.

Every query the product runs lives in the warehouse layer (this folder, ``queries.py`` and
``views.py``); reports and pipeline assets ask for a query by name, never write their own.
"""

from __future__ import annotations

import functools
from importlib import resources

from gpuprice.sources import SCRAPED_SOURCES, sql_values

# Fixed names a .sql file may use as ``{name}``: the source values are defined once (gpuprice.sources).
_CONSTANTS = {"{scraped_sources}": sql_values(SCRAPED_SOURCES)}


@functools.cache
def sql(name: str) -> str:
    """The text of ``sql/<name>.sql`` (e.g. ``sql("reports/current_offers")``), read once."""
    path = resources.files("gpuprice.warehouse").joinpath("sql", *f"{name}.sql".split("/"))
    text = path.read_text(encoding="utf-8")
    for placeholder, value in _CONSTANTS.items():
        text = text.replace(placeholder, value)
    return text
