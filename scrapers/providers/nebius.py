"""Nebius: nebius.com/prices, a Next.js page whose GPU price table lives in ``__NEXT_DATA__``.

Real layouts read (2026): the table as a "highlight-table-block" ({"title": ..., "table":
{"content": [["Item", "vCPUs", "RAM, GB", "Preemptible, GPU-hour", "On-demand, GPU-hour"], ...]}})
in App Router flight data, also as a saved escaped fragment (getcomputable/gpu-index
tests/fixtures/observatory/nebius/prices.html @055204ad), or inside ``__APOLLO_STATE__`` where a
page's ``content`` is a JSON string holding {"blocks": [...]} (a public tracker's scraper test).
The server-rendered page writes the same tables as divs, the header row in a ``__head`` section
and the data rows in a ``__body`` section (ewyluda/gpu-price-index tests/fixtures/nebius.html
@eb72cc64; read by ``scrapers/grids.py``).

The table is an array of string arrays (a header row, then data rows), e.g.
``["NVIDIA HGX H100", "16", "200", "$2.95"]``. Its JSON path moves between deployments, so
tables are found by walking the JSON for lists of string lists whose header row looks like a
GPU price table; other tables on the page (CPU, storage) are skipped.

Columns are mapped by header text. Since ~2026-05-31: name | vCPU per GPU | RAM per GPU |
preemptible | on-demand; on 2026-10-06 a column "GPU-hour (Effective October 1, 2026)" was
added (a scheduled price: offers with ``effective_from``). Prices are per GPU-hour; "HGX" rows
are 8-GPU nodes, so vCPU/RAM per GPU are multiplied by 8 for instance totals. The 2024 page (a role="table"
grid) named each row's instance with its count ("8 × H200 SXM") and gave that instance's memory,
RAM, vCPUs and unitless price ("On demand" $28.00): such a row is read as the whole instance.

Over 400 lines: every place the table is found (flight data, ``__NEXT_DATA__``, Apollo state, HTML)
becomes one ``_Table`` read by one ``_parse_table``; split apart, a reader would lose that shared path.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from bs4 import BeautifulSoup, Tag

from gpuprice.scrapers.fallback_reader import GPU_NAME
from gpuprice.scrapers.grids import class_named_grids, div_grids
from gpuprice.scrapers.identity import Identity
from gpuprice.scrapers.next_data import embedded_json_values, flight_payload, flight_rows
from gpuprice.scrapers.offer import Offer, ParseReport, ParseResult, PriceUnit, StructureMissing, Tier
from gpuprice.scrapers.offer_sink import OfferSink
from gpuprice.scrapers.page_input import BROWSER_HEADERS, UNDECODABLE_NOTE_SEMICOLON, page_text
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.parsing import clean_text, map_columns, normalize_header, parse_number, parse_price
from gpuprice.scrapers.quantities import term_months

PROVIDER = "nebius"
PARSER_VERSION = "nebius/5"  # 5: the page-constructor table block is its page structure
# "Effective October 1" takes its year from the observation date: same bytes, other dates, other results.
PARSE_READS_DATE = True
PRICING_URL = "https://nebius.com/prices"
# Preemptible and on-demand columns sit side by side: an unlabelled price is neither.
UNLABELED_TIER: Tier | None = None
PRICE_UNIT: PriceUnit = "gpu_hour"
IDENTITY = Identity(
    PROVIDER,
    domains=("nebius.com", "nebius.ai"),
    brands=(r"(?i)\bnebius\b",),
    # the price tables' page-constructor block: an excerpt cut from the table carries no site or brand
    # (henryzhangpku/gpu-price-index tests/fixtures/backfill/nebius_20260712235400.html)
    markers=(r"\bpc-highlight-table-block\b",),
)

# Non-price columns, by header text. The empty header is the usual first (name) column.
_FIXED_COLUMNS: dict[str, list[str]] = {
    "name": [
        r"^(nvidia |amd )?(gpus?|gpu (model|type|name|platform|configuration))$",
        r"^(model|name|item|platform|instance|instance type|vm type|preset|configuration|product|product name|"
        r"accelerator|hardware|resource)$",
        r"^$",
    ],
    "count": [r"^(gpu count|gpus? per (vm|node|instance|host)|number of gpus|count|qty|quantity)$"],
    "vram": [r"\bvram\b|\bgpu memory\b"],
    "vcpus": [r"\bv?cpus?\b|\bcores?\b"],
    "ram": [r"\bram\b|\bmemory\b"],
}
# vCPU/RAM columns are per GPU on Nebius ("vCPU per GPU"); a header saying otherwise is a total.
_TOTAL_HEADER = re.compile(r"\btotal\b|\bper (vm|instance|node|host|server)\b")
_PRICE_HEADER = re.compile(
    r"on demand|preemptible|spot|interruptible|price|hour|hourly|\bhr\b|\$|cost|usd|rate"
)
_SPOT_HEADER = re.compile(r"preemptible|spot|interruptible")
_RESERVED_HEADER = re.compile(r"reserv|commit")
_EFFECTIVE = re.compile(r"effective\s*(?:from|as of|on)?\s*[:\-]?\s*(?P<date>[^)\]]+)", re.I)
_DATE_FORMATS = ("%B %d, %Y", "%B %d %Y", "%b %d, %Y", "%b %d %Y", "%d %B %Y", "%d %b %Y", "%Y-%m-%d")
_DATE_FORMATS_NO_YEAR = ("%B %d", "%b %d", "%d %B", "%d %b")
_PER_INSTANCE_HEADER = re.compile(r"\b(instance|node|vm|server|host)\b|\b\d+ gpus?\b")
_PER_GPU_HEADER = re.compile(r"\bper gpu\b|\bgpu hour\b|\bgpu hr\b")
_COUNT_IN_NAME = re.compile(r"\b(\d{1,2})\s*[x×]\s|\b[x×]\s*(\d{1,2})\b", re.I)
_HGX_GPUS = 8  # an HGX baseboard carries 8 GPUs; Nebius prices HGX rows per GPU


def live_requests() -> list[PageRequest]:
    return [PageRequest(url=PRICING_URL, kind="html", headers=dict(BROWSER_HEADERS))]


@dataclass(frozen=True)
class _PriceColumn:
    index: int
    header: str
    tier: Tier
    commitment_months: int | None
    effective_from: dt.date | None
    per_instance: bool = False  # "Price per 8-GPU instance-hour": a whole node, not one GPU

    @property
    def offer_key(self) -> tuple[str, int | None, dt.date | None]:
        return (self.tier, self.commitment_months, self.effective_from)


@dataclass(frozen=True)
class _Table:
    header: list[str]
    rows: list[list[str]]
    title: str = ""  # the block's title ("Preemptible GPU instances"): a tier for untiered columns


def parse(content: bytes, observed_on: dt.date | None = None) -> ParseResult:
    sink = OfferSink(PROVIDER)
    data = _page_data(page_text(content, sink.report, undecodable_note=UNDECODABLE_NOTE_SEMICOLON))
    for table in _gpu_price_tables(data, sink.report):
        _parse_table(table, observed_on, sink)
    return sink.result()


def _page_data(text: str) -> Any:
    """Everything on the page that may hold the price table, as JSON-like data.

    ``__NEXT_DATA__`` (Pages Router) when present, else the App Router flight rows
    (``self.__next_f.push``), plus plain ``<table>``s as lists of string rows; a body that is
    itself JSON is taken as is.
    """
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError as exc:
            # A flight-data fragment ('{\\"type\\":...},{...}'): the JSON values written in it.
            fragment = list(embedded_json_values(stripped))
            if fragment:
                return fragment
            raise StructureMissing(PROVIDER, f"__NEXT_DATA__ is not valid JSON ({exc.msg})") from None
    soup = BeautifulSoup(text, "lxml")
    found: list[Any] = []
    script = soup.find("script", attrs={"id": "__NEXT_DATA__"})
    if script is not None:
        try:
            found.append(json.loads(script.get_text()))
        except json.JSONDecodeError as exc:
            raise StructureMissing(PROVIDER, f"__NEXT_DATA__ is not valid JSON ({exc.msg})") from None
    else:
        found.extend(flight_rows(flight_payload([s.get_text() for s in soup.find_all("script")])))
    found.extend(_html_tables(soup))
    if not found:  # flight data outside push calls (a saved fragment), escaped or not
        found.extend(value for value in embedded_json_values(text) if isinstance(value, (dict, list)))
    if not found:
        raise StructureMissing(
            PROVIDER, 'no <script id="__NEXT_DATA__">, App Router flight data or price <table> on the page'
        )
    return found


def _html_tables(soup: BeautifulSoup) -> list[dict[str, Any]]:
    """Each server-rendered table as {"title": heading above it, "content": rows of cell texts}:
    ``<table>``s, and div tables (``scrapers/grids.py``: lists under a header row, BEM-named
    row/cell divs)."""
    tables = []
    for table in soup.find_all("table"):
        rows = [
            [clean_text(c.get_text(" ")) for c in tr.find_all(["th", "td"])] for tr in table.find_all("tr")
        ]
        rows = [row for row in rows if row]
        if len(rows) >= 2:
            tables.append({"title": _title_above(table), "content": rows})
    for element, grid in [*div_grids(soup), *class_named_grids(soup)]:
        rows = [texts for texts, _ in grid if any(texts)]
        if len(rows) >= 2:
            tables.append({"title": _title_above(element), "content": rows})
    return tables


def _title_above(element: Tag) -> str:
    heading = element.find_previous(["h1", "h2", "h3", "h4", "h5", "h6"])
    return clean_text(heading.get_text(" ")) if heading is not None else ""


def _gpu_price_tables(data: Any, report: ParseReport) -> list[_Table]:
    tables: list[_Table] = []
    seen: set[str] = set()
    gpu_tables_without_prices: list[list[str]] = []
    for table in _candidate_tables(data):
        fingerprint = json.dumps([table.header, table.rows, table.title])
        if fingerprint in seen:  # Next.js often repeats props (page data + preview copies)
            continue
        seen.add(fingerprint)
        if not _mentions_gpus(table):
            continue
        columns, _, _ = map_columns(table.header, _FIXED_COLUMNS)
        if "name" in columns and any(
            _PRICE_HEADER.search(normalize_header(h))
            for i, h in enumerate(table.header)
            if i not in columns.values()
        ):
            tables.append(table)
        else:
            gpu_tables_without_prices.append(table.header)
    if not tables:
        if gpu_tables_without_prices:
            raise StructureMissing(
                PROVIDER,
                "GPU table without name and price columns (headers: "
                + "; ".join(" | ".join(h) for h in gpu_tables_without_prices)
                + ")",
            )
        raise StructureMissing(PROVIDER, "no GPU price table in the page data")
    if len(tables) > 1:
        report.notes.append(f"{len(tables)} GPU price tables found")
    return tables


def _candidate_tables(data: Any) -> Iterator[_Table]:
    """Every list of string rows in the JSON, and every {header: [...], rows: [[...]]} pair, with
    the title of the nearest block around it ({"title": "Preemptible GPU instances", "table": ...})."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        node, title = stack.pop()
        if isinstance(node, str) and node[:1] in ("{", "[") and len(node) > 20:
            # JSON kept as a string (Apollo state: {"content": "{\\"blocks\\": [...]}"})
            try:
                stack.append((json.loads(node), title))
            except json.JSONDecodeError:
                pass
            continue
        if isinstance(node, list):
            table = _as_table(node)
            if table is not None:
                yield replace(table, title=title)
                continue
            stack.extend((item, title) for item in reversed(node))
        elif isinstance(node, dict):
            own = node.get("title")
            title = clean_text(own) if isinstance(own, str) and own.strip() else title
            split = _split_table(node)
            if split is not None:
                table, used_keys = split
                yield replace(table, title=title)
            else:
                used_keys = ("", "")
            stack.extend((v, title) for k, v in reversed(node.items()) if k not in used_keys)


def _is_row(value: Any) -> bool:
    return isinstance(value, list) and all(
        v is None or (isinstance(v, (str, int, float)) and not isinstance(v, bool)) for v in value
    )


def _as_row(value: list) -> list[str]:
    # CMS strings may carry HTML entities ("from&nbsp;$1.55").
    return [clean_text(html.unescape(str("" if v is None else v))) for v in value]


def _as_table(node: list) -> _Table | None:
    if len(node) < 2 or not all(_is_row(r) for r in node):
        return None
    header = node[0]
    if len(header) < 2 or not all(isinstance(h, str) for h in header):
        return None
    return _Table(header=_as_row(header), rows=[_as_row(r) for r in node[1:]])


def _split_table(node: dict) -> tuple[_Table, tuple[str, str]] | None:
    """Tables stored as a header list next to a list of row lists."""
    header_key = next((k for k in node if re.search(r"head|column", str(k), re.I)), None)
    rows_key = next((k for k in node if re.search(r"rows|body|data|items", str(k), re.I)), None)
    if header_key is None or rows_key is None:
        return None
    header, rows = node[header_key], node[rows_key]
    if not (_is_row(header) and len(header) >= 2 and all(isinstance(h, str) for h in header)):
        return None
    if not (isinstance(rows, list) and rows and all(_is_row(r) for r in rows)):
        return None
    return _Table(header=_as_row(header), rows=[_as_row(r) for r in rows]), (header_key, rows_key)


def _mentions_gpus(table: _Table) -> bool:
    """A GPU table: its header says GPU, or a row names a GPU model ("AMD EPYC Genoa" does not)."""
    if any("gpu" in normalize_header(h) for h in table.header):
        return True
    return any(row and GPU_NAME.search(row[0]) for row in table.rows)


def _parse_table(table: _Table, observed_on: dt.date | None, sink: OfferSink) -> None:
    report = sink.report
    columns, _, unmapped = map_columns(table.header, _FIXED_COLUMNS)
    price_columns = _price_columns(table.header, set(columns.values()), observed_on, report, table.title)
    used_by_prices = {table.header[c.index] for c in price_columns}
    sink.note_columns(
        missing=[name for name in ("vcpus", "ram") if name not in columns],
        unexpected=[header for header in unmapped if header not in used_by_prices],
    )

    from_prices: list[str] = []
    for cells in table.rows:
        if not any(cells):
            continue
        if len(cells) != len(table.header):
            if sum(1 for c in cells if c) == 1:
                continue  # a section heading inside the table ("NVIDIA Blackwell")
            report.rows_seen += 1
            sink.reject(
                " | ".join(cells), f"row has {len(cells)} cells but the header has {len(table.header)}"
            )
            continue
        report.rows_seen += 1
        _parse_row(cells, table.header, columns, price_columns, sink, from_prices)
    if from_prices:
        report.notes.append("'from' prices (lowest host variant): " + "; ".join(from_prices))


def _price_columns(
    header: list[str], taken: set[int], observed_on: dt.date | None, report: ParseReport, title: str = ""
) -> list[_PriceColumn]:
    columns: list[_PriceColumn] = []
    # A table titled "Preemptible ..." prices preemptible capacity in columns that do not say so.
    title_spot = bool(_SPOT_HEADER.search(normalize_header(title)))
    for index, text in enumerate(header):
        norm = normalize_header(text)
        if index in taken or not _PRICE_HEADER.search(norm):
            continue
        on_demand_column = bool(re.search(r"on demand", norm))
        tier: Tier = (
            "spot" if _SPOT_HEADER.search(norm) or (title_spot and not on_demand_column) else "on_demand"
        )
        months: int | None = None
        if _RESERVED_HEADER.search(norm):
            months = term_months(norm)
            if months is None:
                report.notes.append(f"column {text!r} is a commitment price without a term; ignored")
                continue
            tier = "reserved"
        effective: dt.date | None = None
        if "effective" in norm:
            effective = _effective_date(text, observed_on)
            if effective is None:
                report.notes.append(f"column {text!r}: cannot read its effective date; ignored")
                continue
        per_instance = bool(_PER_INSTANCE_HEADER.search(norm)) and not _PER_GPU_HEADER.search(norm)
        columns.append(_PriceColumn(index, text, tier, months, effective, per_instance))
    return columns


def _effective_date(header: str, observed_on: dt.date | None) -> dt.date | None:
    """'GPU-hour (Effective October 1, 2026)' -> 2026-10-01; no year -> the next such date."""
    m = _EFFECTIVE.search(clean_text(header))
    if not m:
        return None
    text = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", m.group("date")).strip(" .,")
    for fmt in _DATE_FORMATS:
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            pass
    if observed_on is None:
        return None
    for fmt in _DATE_FORMATS_NO_YEAR:
        try:
            parsed = dt.datetime.strptime(f"{text} {observed_on.year}", f"{fmt} %Y").date()
        except ValueError:
            continue
        # A schedule announced late in the year for early next year.
        if (observed_on - parsed).days > 183:
            parsed = parsed.replace(year=parsed.year + 1)
        return parsed
    return None


def _gpu_count(name: str, count_cell: str = "") -> int:
    """From a count column ("8x", "8 ×", "8"), else from the name ("8x ...", "HGX" = 8), else 1."""
    cell = re.match(r"\s*(\d{1,3})\s*[x×]?\s*$", count_cell)
    if cell and int(cell.group(1)) >= 1:
        return int(cell.group(1))
    m = _COUNT_IN_NAME.search(name)
    if m:
        return int(m.group(1) or m.group(2))
    if re.search(r"\bhgx\b", name, re.I):
        return _HGX_GPUS
    return 1


def _instance_total(
    cells: list[str], headers: list[str], columns: dict[str, int], name: str, count: int
) -> float | None:
    """vCPUs or RAM of the whole instance: per-GPU figures times the GPU count."""
    if name not in columns:
        return None
    value = parse_number(cells[columns[name]])
    if not value:
        return None
    return value if _TOTAL_HEADER.search(normalize_header(headers[columns[name]])) else value * count


def _parse_row(
    cells: list[str],
    headers: list[str],
    columns: dict[str, int],
    price_columns: list[_PriceColumn],
    sink: OfferSink,
    from_prices: list[str],
) -> None:
    raw = " | ".join(cells)
    name = cells[columns["name"]]
    if not name:
        sink.reject(raw, "row without a GPU name")
        return
    prices: list[tuple[_PriceColumn, Decimal, bool]] = []
    bad_cells = False
    for column in price_columns:
        try:
            price = parse_price(cells[column.index], header=column.header)
        except ValueError:
            bad_cells = True
            sink.reject(raw, f"not a price in column {column.header!r}: {cells[column.index]!r}")
            continue
        if price is None:
            continue
        if price.is_from and name not in from_prices:
            from_prices.append(name)
        prices.append((column, price.value, price.is_from))
    if not prices:
        if not bad_cells:
            sink.report.unpriced_rows += 1
        return

    count = _gpu_count(name, cells[columns["count"]] if "count" in columns else "")
    # "8 × H200 SXM" (the 2024 table): the row is the whole instance, its figures and its unitless
    # price columns ("On demand" $28.00 beside "1 × H200 SXM" $3.50) the instance's
    whole_instance = count > 1 and "count" not in columns and bool(_COUNT_IN_NAME.search(name))
    vcpus = _instance_total(cells, headers, columns, "vcpus", 1 if whole_instance else count)
    ram = _instance_total(cells, headers, columns, "ram", 1 if whole_instance else count)
    vram = parse_number(cells[columns["vram"]]) if "vram" in columns else None
    if vram and whole_instance:
        vram /= count
    if whole_instance:
        prices = [(_as_instance_price(column), value, is_from) for column, value, is_from in prices]
    gpu = sink.gpu_slug(name, vram)
    # Per-GPU and per-instance columns of one tier side by side make one offer with both prices.
    grouped: dict[tuple, dict[bool, tuple[_PriceColumn, Decimal, bool]]] = {}
    for column, value, is_from in prices:
        grouped.setdefault(column.offer_key, {}).setdefault(column.per_instance, (column, value, is_from))
    for group in grouped.values():
        column, per_gpu_value, is_from = group.get(False) or group[True]
        instance_value = group[True][1] if True in group else None
        if False not in group:
            per_gpu_value = per_gpu_value / count
        offer = sink.validate(
            raw,
            reason_prefix=f"invalid offer from column {column.header!r}: ",
            gpu=gpu,
            gpu_raw=name,
            gpu_count=count,
            vram_gb=vram or None,
            tier=column.tier,
            commitment_months=column.commitment_months,
            usd_per_gpu_hour=float(per_gpu_value),
            usd_per_instance_hour=None if instance_value is None else float(instance_value),
            effective_from=column.effective_from,
            sku=name,
            vcpus=vcpus,
            ram_gb=ram,
            price_basis="from" if is_from else "list",  # "from $0.99": a floor, not a list price
        )
        if offer is not None:
            sink.keep(offer, _describe(offer))


def _as_instance_price(column: _PriceColumn) -> _PriceColumn:
    """A column read per instance, unless its header says per GPU ("GPU-hour")."""
    if _PER_GPU_HEADER.search(normalize_header(column.header)):
        return column
    return replace(column, per_instance=True)


def _describe(offer: Offer) -> str:
    when = f" effective {offer.effective_from}" if offer.effective_from else ""
    return f"{offer.sku} | {offer.tier}{when} | ${offer.usd_per_gpu_hour}"
