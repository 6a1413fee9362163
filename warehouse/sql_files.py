"""The product's SQL, loaded by name: ``warehouse/sql/<group>/<name>.sql``.

Every statement the product runs lives in a ``.sql`` file under ``warehouse/sql/`` (tests/
test_sql_files.py fails on a new SQL string in the warehouse's Python): ``schema.sql`` and
``migrations/`` (the tables), ``views/`` (the analyst views), ``queries/`` and ``writes/`` (what the
assets and commands read and write), ``reports/``. User values are always bound parameters
(``?`` or ``$name``); the only text put into a statement is one of the fixed placeholders below,
written ``{name}`` in a file, each defined once in the code it names; ``{include:group/name}``
puts another file's query in (a query two statements share); ``{columns:table}`` and
``{markers:table}`` are a table's columns as schema.sql defines them (warehouse/tables.py) and as
many ``?``.

Where DuckDB binds no parameter (the path of an ATTACH, LOAD or SET, an alias, a table name, a
list of column names), :func:`statement` fills a *value* placeholder, each safe by its kind:
``{literal:key}`` a quoted string literal (single quotes doubled), ``{identifier:key}`` a name
matching ``IDENTIFIER`` (anything else is refused, never quoted into the text),
``{literals:key}`` / ``{identifiers:key}`` comma-separated lists of them (``{identifiers:key:p}``
qualifies each name as ``p.name``), ``{boolean:key}`` ``true`` or ``false`` from a bool.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from importlib import resources

from gpuprice.scrapers.offer import PROVIDER_KINDS
from gpuprice.sources import IMPORTED_SOURCES, SCRAPED_SOURCES, sql_values
from gpuprice.warehouse.staleness import STALE_AFTER_DAYS, current_sql

# The canonical offer key: what one offer is, whatever the source (a scrape, a replayed page,
# a cited public report), so an offer's history is one line. The provider's own name for it
# (sku) is not part of it: public reports and pages name the same offer differently.
OFFER_KEY = "provider, gpu, gpu_count, tier, community, commitment_months, region"
# The same key as one text value (NULL parts spelled out), for joins and for analysts.
OFFER_KEY_TEXT = (
    "concat_ws('|', provider, gpu, gpu_count, tier, CASE WHEN community THEN 'community' ELSE 'secure' END,"
    " coalesce(CAST(commitment_months AS VARCHAR) || 'mo', '-'), coalesce(region, '-'))"
)
# One row of one provider's snapshot (a scheduled price shares it with the current one).
SNAPSHOT_ROW_KEY = "provider, sku, gpu_count, tier, community, commitment_months, region, price_basis"
# The cheapest-region rule (a hyperscaler states one price per region and a job runs in one of
# them): the fields that tell one offer's regions apart, and which of its regions counts: the
# cheapest, the first of equal ones by region (region-less rows first), then source. One rule for
# the ranking (queries/offers_as_of_range) and analytics.cheapest_region (views/v_cheapest_region).
REGION_PEERS = "provider, sku, gpu, gpu_count, tier, community, commitment_months, price_basis"
CHEAPEST_REGION_ORDER = "usd_per_gpu_hour, region NULLS FIRST, source"
# When an offer has several prices at one time, the list price speaks for it.
BASIS_RANK = "CASE price_basis WHEN 'list' THEN 0 WHEN 'from' THEN 1 ELSE 2 END"
# "No capacity seen for N days": an offer whose source states availability, reported all along,
# without a day of stock in the last N days.
CAPACITY_WATCH_DAYS = 7

PLACEHOLDERS: dict[str, str] = {
    # the snapshot sources of a provider's daily partition (gpuprice.sources), as an IN list
    "scraped_sources": sql_values(SCRAPED_SOURCES),
    # the other snapshot sources (imported history), as an IN list: unlike NOT IN {scraped_sources}
    # it lets DuckDB skip row groups by their min/max source (a scraped history holds none)
    "imported_sources": sql_values(IMPORTED_SOURCES),
    "region_peers": REGION_PEERS,
    "cheapest_region_order": CHEAPEST_REGION_ORDER,
    "offer_key": OFFER_KEY,
    "offer_key_text": OFFER_KEY_TEXT,
    "snapshot_row_key": SNAPSHOT_ROW_KEY,
    "basis_rank": BASIS_RANK,
    # the one "current price" rule (warehouse/staleness.py) over a column named age_days
    "price_is_current": current_sql("age_days"),
    "stale_after_days": str(STALE_AFTER_DAYS),
    "capacity_watch_days": str(CAPACITY_WATCH_DAYS),
    # provider -> gpu_cloud / hyperscaler / marketplace (scrapers/offer.py), as VALUES rows
    "provider_kinds": ", ".join(f"('{p}', '{k}')" for p, k in PROVIDER_KINDS.items()),
    # the aliases publishing attaches the copy being built and its scratch database under
    "analytics_copy": "_analytics_copy",
    "analytics_scratch": "_analytics_scratch",
}
_PLACEHOLDER = re.compile(r"\{((?:include|columns|markers):[a-z_/]+|[a-z_]+)\}")
# A value placeholder, filled by ``statement``: kind, key, and for identifiers a qualifying alias.
_VALUE = re.compile(r"\{(literal|literals|identifier|identifiers|boolean):([a-z_]+)(?::([a-z_]+))?\}")
# The names a statement may be given as text: plain lower- or upper-case SQL identifiers.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _table_columns(table: str) -> tuple[str, ...]:
    # warehouse/tables.py reads schema.sql through this module: imported when first needed.
    from gpuprice.warehouse.tables import column_names

    return column_names(table)


def fill(text: str, where: str = "SQL") -> str:
    """``text`` with its ``{name}`` placeholders filled; an unknown one is an error, not left in.
    Value placeholders (``{literal:key}`` ...) are left for :func:`statement`."""

    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        if key.startswith("include:"):  # another file's statement, written once (a shared query)
            return sql(key.removeprefix("include:")).strip().rstrip(";")
        if key.startswith("columns:"):  # a table's columns, in the order schema.sql has them
            return ", ".join(_table_columns(key.removeprefix("columns:")))
        if key.startswith("markers:"):  # one ``?`` per column of the table
            return ", ".join("?" * len(_table_columns(key.removeprefix("markers:"))))
        if key not in PLACEHOLDERS:
            raise KeyError(f"{where}: unknown placeholder {{{key}}}; known: {', '.join(PLACEHOLDERS)}")
        return PLACEHOLDERS[key]

    return _PLACEHOLDER.sub(one, text)


@functools.cache
def sql(name: str) -> str:
    """The text of ``sql/<name>.sql`` (e.g. ``sql("reports/current_offers")``) with its
    placeholders filled, read once."""
    path = resources.files("gpuprice.warehouse").joinpath("sql", *f"{name}.sql".split("/"))
    return fill(path.read_text(encoding="utf-8"), f"sql/{name}.sql")


def quote_literal(text: str) -> str:
    """``text`` as a single-quoted SQL string literal (each single quote doubled)."""
    return "'" + text.replace("'", "''") + "'"


def quote_identifier(name: str, alias: str | None = None) -> str:
    """``name`` (qualified by ``alias``) when it is a plain identifier; ValueError otherwise."""
    for part in (name, alias):
        if part is not None and not IDENTIFIER.fullmatch(part):
            raise ValueError(f"{part!r} is not a SQL identifier (letters, digits and _; not a digit first)")
    return f"{alias}.{name}" if alias else name


def _items(value: object, key: str, *, empty: bool) -> Sequence[object]:
    """``value`` as a list of items (an empty one only where ``empty``)."""
    if isinstance(value, str) or not isinstance(value, Sequence) or not (value or empty):
        raise ValueError(f"{{{key}}} needs a {'' if empty else 'non-empty '}list, not {value!r}")
    return value


def statement(name: str, /, **values: object) -> str:
    """``sql(name)`` with its value placeholders filled from ``values`` (see the module's
    docstring): a missing or unused value is an error, and so is a name that is no identifier."""
    used: set[str] = set()

    def one(match: re.Match[str]) -> str:
        kind, key, alias = match.groups()
        if alias is not None and kind != "identifiers":
            raise KeyError(f"sql/{name}.sql: only {{identifiers:key:alias}} takes an alias")
        if key not in values:
            raise KeyError(f"sql/{name}.sql needs a value for {{{kind}:{key}}}")
        used.add(key)
        value = values[key]
        if kind == "literal":
            return quote_literal(str(value))
        if kind == "literals":
            return ", ".join(quote_literal(str(v)) for v in _items(value, key, empty=True))
        if kind == "identifier":
            return quote_identifier(str(value))
        if kind == "identifiers":
            return ", ".join(quote_identifier(str(v), alias) for v in _items(value, key, empty=False))
        if not isinstance(value, bool):
            raise ValueError(f"{{boolean:{key}}} needs True or False, not {value!r}")
        return "true" if value else "false"

    text = _VALUE.sub(one, sql(name))
    unused = sorted(set(values) - used)
    if unused:
        raise KeyError(f"sql/{name}.sql has no placeholder for {', '.join(unused)}")
    return text
