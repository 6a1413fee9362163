"""CoreWeave: the instance table of coreweave.com/pricing (and the Classic component table).

Structure as documented in provider-pages.md (CoreWeave section). Rows read
"NVIDIA HGX B200 | 8 | 180 | 128 | 2,048 | 61.44 | $68.80": name, GPU count, VRAM per GPU,
vCPUs, RAM (GB), local NVMe (TB), on-demand price per *instance*-hour, and from 2026-10 a spot
price per instance-hour. Per-GPU prices are the instance price divided by the GPU count;
``usd_per_instance_hour`` keeps the page's number. "Contact sales" (B300 on-demand, reserved
"up to 60 % off") is unpriced: no offer, never 0.

Columns are mapped by header text; a price column is per instance unless its header names the
GPU ("per GPU", "GPU component"). A reserved column becomes ``reserved`` offers only when its
header states the term ("1-year reserved"). Tables may be ``<table>``, ARIA grids
(``role="table"``/``row``/``cell``) or, as the live page has been since 2026 (a real capture:
getcomputable/gpu-index tests/fixtures/observatory/coreweave/pricing.html @055204ad, 2026-08-22),
a Webflow div grid: a header row of divs above a ``role="list"`` collection whose items hold one
row of cells each plus mobile-only duplicates (``scrapers/grids.py``). Counts carry footnote marks
("4^1": 4 GPUs, footnote 1). The "Inference Single GPU Price" column restates the on-demand
price per GPU, rounded to cents; it is not read as another offer.

The Classic page (coreweave.com/pricing/classic) prices the GPU as a component, with vCPU and
RAM billed on top: those rows become one-GPU offers at the GPU component price, with no
instance price and no vCPU/RAM (the component price is not what a whole machine costs; see
the report note). A capture cut inside that table's header row (the rows under its last header
cell alone, "GPU Component Cost Per Hour") reads the same way: the label is set over the price
column (``headless_class_named_grids`` in ``scrapers/grids.py``).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from bs4 import BeautifulSoup, SoupStrainer, Tag

from gpuprice.scrapers.grids import div_grids, headless_class_named_grids
from gpuprice.scrapers.identity import Identity
from gpuprice.scrapers.offer import ParseResult, PriceUnit, StructureMissing, Tier
from gpuprice.scrapers.offer_sink import FROM_PRICE_NOTE, OfferSink
from gpuprice.scrapers.page_input import page_text
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.parsing import (
    cell_text,
    map_columns,
    normalize_header,
    parse_number,
    parse_price,
)
from gpuprice.scrapers.quantities import size_gb, term_months

PROVIDER = "coreweave"
PARSER_VERSION = "coreweave/3"  # 3: Classic GPU-component rows whose header row was cut (grids)
PRICING_URL = "https://www.coreweave.com/pricing"
# The documented row has one price: on-demand per 8-GPU instance-hour (spot columns are labelled).
UNLABELED_TIER: Tier | None = "on_demand"
PRICE_UNIT: PriceUnit = "instance_hour"
IDENTITY = Identity(
    PROVIDER,
    domains=("coreweave.com",),
    brands=(r"(?i)\bcoreweave\b",),
    # The pricing grid's own Webflow classes and column (real capture: getcomputable/gpu-index
    # tests/fixtures/observatory/coreweave/pricing.html @055204ad).
    # The 2023 page's price column, "GPU Component<br/>Cost Per Hour" (henryzhangpku/gpu-price-index
    # tests/fixtures/backfill/coreweave_20230921194906.html: an excerpt naming neither site nor brand).
    markers=(
        r"\bkubernetes-gpu-pricing\b",
        r"\btable-model-name\b",
        r"Inference Single GPU Price",
        r"GPU Component\s*(?:<br\s*/?>)?\s*Cost Per Hour",
    ),
)
CLASSIC_PRICING_URL = "https://www.coreweave.com/pricing/classic"

# Order matters: each header is used once, so specific columns claim theirs before generic ones.
_COLUMNS: dict[str, tuple[str, ...]] = {
    "count": (
        r"\bgpu count\b",
        r"\bgpus?\b.*\b(count|qty|quantity|number)\b",
        r"\b(number|num|no) of gpus?\b",
        r"^(of )?gpus$",  # "# of GPUs" ('#' is folded away), "GPUs"
        r"^(count|qty|quantity)$",
    ),
    "vram": (r"vram", r"gpu mem", r"memory per gpu"),
    "vcpus": (r"vcpu", r"\bcpus?\b", r"\bcores?\b"),
    "ram": (r"\bram\b", r"system mem", r"memory"),
    "storage": (r"storage", r"nvme", r"\bssd\b", r"disk"),
    "spot": (r"\bspot\b", r"preempt", r"interrupt"),
    "reserved": (r"reserv", r"commit"),
    # A per-GPU on-demand column beside the per-instance one ("Price per GPU-hour").
    "on_demand_gpu": (r"(on ?demand|price|cost).*\bper gpu\b", r"(on ?demand|price|cost).*\bgpu (hr|hour)\b"),
    "on_demand": (r"on ?demand", r"price", r"cost", r"\$", r"\b(hr|hour|rate)\b"),
    "name": (r"^(gpu )?(model|name|instance|platform|type|sku)\b", r"^gpus?$", r"^gpu\b", r"\bname\b", r"^$"),
}
_PRICE_COLUMNS = ("on_demand", "spot", "reserved")
_SPEC_COLUMNS = ("count", "vram", "vcpus", "ram", "storage")
_TIER_OF_COLUMN = {"on_demand": "on_demand", "spot": "spot", "reserved": "reserved"}
_PER_GPU_HEADER = re.compile(r"\bper gpu\b|\bgpu (hr|hour)\b|\bcomponent\b|/\s*gpu")
_COUNT_IN_NAME_RX = re.compile(r"^(\d{1,3})\s*[x\u00d7]\s+", re.I)
_UNIT_RX = re.compile(r"\b(tib|tb|gib|gb)\b", re.I)
_CELL_ROLES = re.compile(r"^(cell|gridcell|columnheader|rowheader)$")
_REGION_RX = re.compile(r"^\s*REGION\s*:\s*(\S.{0,40}?)\s*$", re.I)
_GPU_COMPONENT_RX = re.compile(r"\bgpu component\b")
_COMPONENT_NOTE = "Classic GPU component prices exclude vCPU and RAM, which are billed per unit on top"


def live_requests() -> list[PageRequest]:
    """The instance pricing page; the Classic component page is not fetched (legacy platform)."""
    return [PageRequest(url=PRICING_URL, kind="html")]


def parse(content: bytes, observed_on: dt.date | None = None) -> ParseResult:
    """Parse CoreWeave's pricing page. ``observed_on`` is unused: no scheduled prices are posted."""
    sink = OfferSink(PROVIDER)
    text = page_text(content, sink.report)
    # Fast path: build only the <table>s; the whole page is built only to look for ARIA grids.
    tables = _price_tables(BeautifulSoup(text, "lxml", parse_only=SoupStrainer("table")), sink)
    if not tables:
        soup = BeautifulSoup(text, "lxml")
        tables = _price_tables(soup, sink, aria=True) or _price_tables(soup, sink, headless=True)
    if not tables:
        raise StructureMissing(
            PROVIDER,
            "no GPU table with name, GPU count and price columns (login/captcha page or layout change)",
        )
    for table in tables:
        for row in table.rows:
            sink.report.rows_seen += 1
            _emit_row(row, table, sink)
    return sink.result()


# --- reading tables ----------------------------------------------------------------------------


@dataclass
class _Table:
    headers: dict[str, str]  # logical column -> header text
    rows: list[tuple[dict[str, str], str]]  # ({logical column: cell text}, raw row text)
    region: str | None = None  # "REGION: EUROPE" above the table


def _price_tables(
    soup: BeautifulSoup, sink: OfferSink, *, aria: bool = False, headless: bool = False
) -> list[_Table]:
    tables = []
    grids = headless_class_named_grids(soup) if headless else _grids(soup, aria=aria)
    for element, grid in grids:
        table = _read_table(grid, sink)
        if table is not None:
            table.region = _region_above(element)
            tables.append(table)
    return tables


def _region_above(element: Tag) -> str | None:
    """The region a "REGION: NORTH AMERICA" heading above the table names ("North America")."""
    label = element.find_previous(string=_REGION_RX)
    match = _REGION_RX.search(str(label)) if label is not None else None
    return match.group(1).strip().title() if match else None


def _grids(soup: BeautifulSoup, *, aria: bool) -> Iterator[tuple[Tag, list[tuple[list[str], bool]]]]:
    """Each table and its rows as (cell texts, is header row): <table>s, or div and ARIA grids when ``aria``."""
    if aria:
        yield from _aria_grids(soup)
        return
    for table in soup.find_all("table"):
        rows = []
        for tr in table.find_all("tr"):
            if tr.find_parent("table") is not table:
                continue  # nested tables are read on their own
            cells = tr.find_all(["td", "th"], recursive=False)
            header = bool(tr.find_parent("thead")) or (bool(cells) and all(c.name == "th" for c in cells))
            rows.append(([cell_text(c) for c in cells], header))
        yield table, rows


def _aria_grids(soup: BeautifulSoup) -> Iterator[tuple[Tag, list[tuple[list[str], bool]]]]:
    yield from div_grids(soup)  # Webflow collection lists under a header row of divs (the live page)
    for grid in soup.find_all(role=re.compile(r"^(table|grid)$")):
        if grid.name == "table":
            continue
        rows = []
        for row in grid.find_all(role="row"):
            cells = row.find_all(role=_CELL_ROLES)
            header = bool(cells) and all(c.get("role") == "columnheader" for c in cells)
            rows.append(([cell_text(c) for c in cells], header))
        yield grid, rows


def _read_table(rows: list[tuple[list[str], bool]], sink: OfferSink) -> _Table | None:
    """The table's data rows keyed by logical column, or None when it is not a GPU price table."""
    rows = [(texts, header) for texts, header in rows if any(texts)]
    if not rows:
        return None
    header_texts, is_header = rows[0]
    if not is_header and any("$" in text for text in header_texts):
        return None  # data before any header: not a table this parser understands
    mapping, _, unexpected = map_columns(header_texts, _COLUMNS)
    if "on_demand_gpu" in mapping and "on_demand" not in mapping:
        mapping["on_demand"] = mapping.pop("on_demand_gpu")  # the only on-demand column, per GPU
    # CPU-only and storage tables have neither a GPU count nor VRAM; the Classic table may lack both
    # when its header row was cut, its price column still naming the GPU component
    gpu_table = "count" in mapping or "vram" in mapping or _is_gpu_component_price(mapping, header_texts)
    if "name" not in mapping or not gpu_table or not any(name in mapping for name in _PRICE_COLUMNS):
        return None
    sink.note_columns(missing=[name for name in _SPEC_COLUMNS if name not in mapping], unexpected=unexpected)
    return _Table(
        headers={name: header_texts[i] for name, i in mapping.items()},
        rows=[
            ({name: texts[i] for name, i in mapping.items() if i < len(texts)}, " | ".join(texts))
            for texts, _ in rows[1:]
        ],
    )


def _is_gpu_component_price(mapping: dict[str, int], headers: list[str]) -> bool:
    return any(
        _GPU_COMPONENT_RX.search(normalize_header(headers[mapping[c]]))
        for c in _PRICE_COLUMNS
        if c in mapping
    )


# --- one row -> offers -------------------------------------------------------------------------


def _emit_row(row: tuple[dict[str, str], str], table: _Table, sink: OfferSink) -> None:
    cells, raw = row
    gpu_raw = cells.get("name", "")
    if not gpu_raw:
        sink.reject(raw, "row without a GPU name")
        return
    priced: list[tuple[str, Decimal, bool]] = []
    for column in _PRICE_COLUMNS:
        try:
            price = parse_price(cells.get(column), header=table.headers.get(column))
        except ValueError as exc:
            sink.reject(raw, f"{column}: {exc}")
            continue
        if price is not None and price.value > 0:
            priced.append((column, price.value, price.is_from))
            if price.is_from:
                sink.note(FROM_PRICE_NOTE)
    if not priced:
        sink.report.unpriced_rows += 1  # "Contact sales" or an empty cell: never a 0 price
        return

    try:
        gpu_price = parse_price(cells.get("on_demand_gpu"))
    except ValueError as exc:
        sink.reject(raw, f"on_demand_gpu: {exc}")
        gpu_price = None
    gpu_column_price = gpu_price.value if gpu_price is not None and gpu_price.value > 0 else None
    per_gpu_columns = {
        c
        for c in _PRICE_COLUMNS
        if c in table.headers and _PER_GPU_HEADER.search(normalize_header(table.headers[c]))
    }
    count_text = cells.get("count")
    count = parse_number(count_text) if count_text else None
    if count is None and "count" not in table.headers:
        in_name = _COUNT_IN_NAME_RX.match(gpu_raw)  # "8x NVIDIA HGX H100" with no count column
        count = float(in_name.group(1)) if in_name else None
    component = any("component" in normalize_header(table.headers[c]) for c, _, _ in priced)
    if count is None and "count" not in table.headers and component:
        count = 1.0  # the Classic table prices one GPU (a component) per row
    if count is None or count != int(count) or count < 1:
        sink.reject(raw, f"GPU count missing or invalid: {count_text!r}")
        return
    vram = parse_number(cells.get("vram"))
    gpu = sink.gpu_slug(gpu_raw, vram)
    if component:
        sink.note(_COMPONENT_NOTE)

    for column, value, is_from in priced:
        months = None
        if column == "reserved":
            months = term_months(normalize_header(table.headers[column]))
            if months is None:
                sink.reject(raw, f"reserved price without a term in its header {table.headers[column]!r}")
                continue
        per_gpu_price = column in per_gpu_columns
        per_gpu_value = value if per_gpu_price else value / int(count)
        instance_value = None if per_gpu_price else value
        if column == "on_demand" and not per_gpu_price and gpu_column_price is not None:
            per_gpu_value = gpu_column_price  # both stated: keep the page's per-GPU figure too
        sink.add(
            raw,
            gpu=gpu,
            gpu_raw=gpu_raw,
            gpu_count=int(count),
            vram_gb=vram,
            tier=_TIER_OF_COLUMN[column],
            commitment_months=months,
            usd_per_gpu_hour=per_gpu_value,
            usd_per_instance_hour=instance_value,
            sku=f"{gpu_raw} [GPU component]" if component else gpu_raw,
            region=table.region,
            vcpus=None if component else parse_number(cells.get("vcpus")),
            ram_gb=None if component else _size_gb(cells.get("ram"), table.headers.get("ram"), default="GB"),
            storage_gb=None
            if component
            else _size_gb(cells.get("storage"), table.headers.get("storage"), default="TB"),
            price_basis="from" if is_from else "list",  # "from $x": a floor, not a list price
        )


def _size_gb(text: str | None, header: str | None, *, default: str) -> float | None:
    """A RAM or storage cell in GB; a bare number is in the header's unit ("RAM (GB)",
    "Local Storage (TB)"), else in ``default`` (CoreWeave lists NVMe in TB)."""
    header_unit = _UNIT_RX.search(header or "")
    return size_gb(text, default_unit=header_unit.group(1) if header_unit else default) or None
