"""Massed Compute: vm.massedcompute.com/pricing, one row per instance size, priced per instance-hour.

Instances come in 1x/2x/4x/8x GPU sizes with vCPU, RAM and storage bundled; SKUs read like
``gpu_1x_h100``. The page markup is not documented, so two layouts are read, both by label text:

- a table (``<table>`` or an ARIA grid of role=row/cell elements) whose header row names the
  columns (Instance | GPU | GPUs | VRAM | vCPUs | RAM | Storage | Price/hr, in any order, with
  extra columns tolerated); rows spanning the whole table ("NVIDIA H100 PCIe") name the GPU of
  the rows below them;
- rows (cards, list items) of labelled cells: ``data-label`` attributes, ``<dt>/<dd>`` pairs or
  elements whose class says "label" followed by their value.

``usd_per_gpu_hour`` = instance price / GPU count. The count comes from the SKU and from a count
column; when both are present they must agree, or the row is rejected. Naming traps follow
Massed Compute's own SKU docs (see ``models.gpu_names``): ``gpu_1x_h100`` is the H100 80GB
PCIe card, the cheap H200 is the NVL card, and the SXM5 parts are named "SXM5".

Over 400 lines: the three layouts (table or ARIA grid, labelled rows, App Router flight records) all
become one ``_Record`` and one rule turns a record into an offer (``_add_offer``); split apart, a
reader would lose that shared path.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from bs4 import BeautifulSoup, Tag

from gpuprice.scrapers.fallback_reader import GPU_NAME
from gpuprice.scrapers.gpu_names import normalize_gpu
from gpuprice.scrapers.identity import Identity
from gpuprice.scrapers.next_data import flight_payload, fragment_flight_payload, is_rsc_reference
from gpuprice.scrapers.offer import ParseResult, PriceUnit, StructureMissing, Tier
from gpuprice.scrapers.offer_sink import OfferSink
from gpuprice.scrapers.page_input import BROWSER_HEADERS, UNDECODABLE_NOTE_SEMICOLON, page_text
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.parsing import (
    cell_text,
    clean_text,
    map_columns,
    normalize_header,
    parse_number,
    parse_price,
)
from gpuprice.scrapers.quantities import size_gb

PROVIDER = "massedcompute"
PARSER_VERSION = "massedcompute/3"
# massedcompute.com/home/pricing redirects here (observed 2026-10-06).
PRICING_URL = "https://vm.massedcompute.com/pricing"
# On-demand only, priced per instance-hour.
UNLABELED_TIER: Tier | None = "on_demand"
PRICE_UNIT: PriceUnit = "instance_hour"
IDENTITY = Identity(
    PROVIDER,
    domains=("massedcompute.com",),
    brands=(r"(?i)\bmassed\s?compute\b",),
    # The pricing page's design tokens (real capture: getcomputable/gpu-index
    # tests/fixtures/observatory/massedcompute/pricing_rsc_excerpt.html @055204ad).
    markers=(r"\bbg-pricing-paper\b", r"\btext-pricing-ink\b", r"\bfont-pricing-mono\b"),
)

# Logical column -> header patterns (normalized header text). Order matters: the first logical
# name whose pattern matches a header takes it, so per-GPU prices are claimed before prices,
# "GPU memory" before "memory" and monthly prices before hourly ones.
_COLUMNS: dict[str, list[str]] = {
    "sku": [
        r"^(instance|instance type|instance name|instance id|sku|plan|flavou?r|machine|machine type|vm type|vm|name|configuration|config)$"
    ],
    "count": [
        r"^(number |num |no |nr )?(of )?gpus$",
        r"^gpus? (count|qty|quantity|number)$",
        r"^(count|qty|quantity|size|instance size|gpus per (instance|vm|node))$",
    ],
    "gpu": [r"^(gpu|gpu model|gpu type|gpu name|model|accelerator|card)$"],
    "vram": [r"\bvram\b|\bgpu (memory|ram|mem)\b|\bmemory per gpu\b"],
    "monthly": [r"\b(month|monthly|mo|week|weekly|day|daily|year|yearly)\b"],
    "gpu_price": [r"\bper gpu\b|\bgpu (hr|hour)\b|\$ gpu\b|\bgpu price\b"],
    "price": [r"\bprice\b|\bcost\b|\brate\b|\bhourly\b|\bhour\b|\bhr\b|\bon demand\b|\$|\busd\b"],
    "vcpus": [r"\bv?cpus?\b|\bv?cores?\b"],
    "ram": [r"\bram\b|\bmemory\b|\bmem\b"],
    "storage": [r"\bstorage\b|\bdisk\b|\bssd\b|\bnvme\b"],
    "available": [r"\bavailab|\bstatus\b|\bstock\b"],
    "region": [r"\bregion\b|\blocation\b|\bdata ?cent(er|re)\b|\bdatacent(er|re)\b"],
}
_EXPECTED = ("sku", "gpu", "count", "vram", "vcpus", "ram", "storage")
_SKU = re.compile(r"\bgpu_(\d+)x_([a-z0-9]+(?:_[a-z0-9]+)*)\b", re.I)
_COUNT_IN_NAME = re.compile(r"(?<![\w.])(\d{1,2})\s*[x×](?=\s|[a-z])", re.I)
_MEMORY_IN_NAME = re.compile(r"\((\d+(?:\.\d+)?)\s*GB\)", re.I)
_UNAVAILABLE = re.compile(r"sold out|unavailable|out of stock|no capacity|waitlist|\bno\b|^0+$", re.I)
_AVAILABLE = re.compile(r"available|in stock|\byes\b|\d+|✓|✔", re.I)
_PER_GPU_TOLERANCE = Decimal("0.01")  # a per-GPU column rounded to cents
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6", "caption")
_SKIPPED_TAGS = ("script", "style", "noscript", "template", "svg", "head")


def live_requests() -> list[PageRequest]:
    return [PageRequest(url=PRICING_URL, kind="html", headers=dict(BROWSER_HEADERS))]


@dataclass(frozen=True)
class _Record:
    """One instance row: header texts and cell texts of equal length, plus what names its GPU."""

    header: tuple[str, ...]
    cells: tuple[str, ...]
    context: str | None  # the section/caption/card heading above the row
    text: str  # all the row's text, for a SKU written outside the labelled cells

    @property
    def raw(self) -> str:
        cells = " | ".join(self.cells)
        return f"{self.context}: {cells}" if self.context else cells


def parse(content: bytes, observed_on: dt.date | None = None) -> ParseResult:
    sink = OfferSink(PROVIDER)
    text = page_text(content, sink.report, undecodable_note=UNDECODABLE_NOTE_SEMICOLON)
    soup = BeautifulSoup(text, "lxml")
    grids = _grids(soup)
    records = list(_table_records(grids, sink))
    if not records:
        records = list(_flight_records(text, soup))
    if not records:
        for skipped in soup.find_all(_SKIPPED_TAGS):
            skipped.decompose()
        records = list(_labelled_records(soup))
    if not records:
        what = "no instance price table or labelled instance rows (need a GPU or instance name and a price)"
        if grids:
            heads = [" | ".join(_header_cells(g)) for g in grids[:3]]
            what += "; tables seen: " + "; ".join(h for h in heads if h)
        raise StructureMissing(PROVIDER, what)

    mappings: dict[tuple[str, ...], dict[str, int]] = {}
    for record in records:
        if record.header not in mappings:
            mappings[record.header] = _mapping(record.header, sink)
        sink.report.rows_seen += 1
        _add_offer(record, mappings[record.header], sink)
    return sink.result()


def _is_price_table(columns: dict[str, int]) -> bool:
    return ("price" in columns or "gpu_price" in columns) and ("sku" in columns or "gpu" in columns)


def _mapping(header: tuple[str, ...], sink: OfferSink) -> dict[str, int]:
    columns, _, unexpected = map_columns(header, _COLUMNS)
    sink.note_columns(missing=[name for name in _EXPECTED if name not in columns], unexpected=unexpected)
    if "monthly" in columns:
        sink.report.notes.append(f"column {header[columns['monthly']]!r} is not an hourly price; ignored")
    return columns


# ---------------------------------------------------------------- layout 1: tables


@dataclass(frozen=True)
class _Grid:
    """A table as text: ``<table>`` markup or an ARIA grid (role=table/row/cell)."""

    element: Tag
    rows: list[tuple[tuple[str, ...], bool]]  # (cell texts, is a header row)

    def header_index(self) -> int | None:
        flagged = next((i for i, (_, is_header) in enumerate(self.rows) if is_header), None)
        return flagged if flagged is not None else (0 if self.rows else None)


_ARIA_TABLES = ["table", "grid", "treegrid"]
_ARIA_CELLS = ["cell", "gridcell", "columnheader", "rowheader"]


def _grids(soup: BeautifulSoup) -> list[_Grid]:
    grids: list[_Grid] = []
    for table in _table_elements(soup):
        if table.name == "table":
            rows = [
                # A header row is all <th>; data rows may start with a <th> row header.
                (
                    tuple(cell_text(c) for c in cells),
                    bool(cells) and all(c.name == "th" for c in cells),
                )
                for cells in (_child_tags(row, ("td", "th")) for row in _html_rows(table))
            ]
        else:
            rows = []
            for row in table.find_all(attrs={"role": "row"}):
                cells = row.find_all(attrs={"role": _ARIA_CELLS})
                rows.append(
                    (
                        tuple(cell_text(c) for c in cells),
                        bool(cells) and all(c.get("role") == "columnheader" for c in cells),
                    )
                )
        grids.append(_Grid(table, rows))
    return grids


def _table_elements(soup: BeautifulSoup) -> list[Tag]:
    """<table> elements and ARIA grids, in page order (one pass, none inside scripts or templates)."""
    found: list[Tag] = []
    for node in soup.descendants:
        is_table = isinstance(node, Tag) and (node.name == "table" or node.get("role") in _ARIA_TABLES)
        if is_table and node.find_parent(_SKIPPED_TAGS) is None:
            found.append(node)
    return found


def _child_tags(tag: Tag, names: tuple[str, ...]) -> list[Tag]:
    return [c for c in tag.children if isinstance(c, Tag) and c.name in names]


def _html_rows(table: Tag) -> list[Tag]:
    """The table's own rows (directly or in thead/tbody/tfoot), not those of nested tables."""
    rows: list[Tag] = []
    for child in _child_tags(table, ("tr", "thead", "tbody", "tfoot")):
        rows.extend([child] if child.name == "tr" else _child_tags(child, ("tr",)))
    return rows


def _header_cells(grid: _Grid) -> list[str]:
    index = grid.header_index()
    return list(grid.rows[index][0]) if index is not None else []


def _table_records(grids: list[_Grid], sink: OfferSink) -> Iterator[_Record]:
    for grid in grids:
        header_index = grid.header_index()
        if header_index is None:
            continue
        header = grid.rows[header_index][0]
        columns, _, _ = map_columns(header, _COLUMNS)
        if not _is_price_table(columns):
            continue
        caption = grid.element.find("caption")
        heading = caption or grid.element.find_previous(_HEADINGS)
        context = clean_text(heading.get_text(" ")) if heading is not None else None
        for index, (cells, _) in enumerate(grid.rows):
            if index == header_index or not any(cells):
                continue
            if len(cells) == 1:  # a group row spanning the table: names the GPU of the rows below
                context = cells[0]
                continue
            if len(cells) != len(header):
                sink.report.rows_seen += 1
                sink.reject(" | ".join(cells), f"row has {len(cells)} cells but the header has {len(header)}")
                continue
            yield _Record(header=header, cells=cells, context=context, text=" ".join(cells))


# ---------------------------------------------------------------- layout 2: labelled cells


def _label_pairs(soup: BeautifulSoup) -> list[tuple[Tag, str, str]]:
    """(anchor element, label, value) for data-label cells, <dt>/<dd> pairs and class 'label' elements."""
    pairs: list[tuple[Tag, str, str]] = []
    for tag in soup.find_all(True):
        if tag.has_attr("data-label"):
            pairs.append((tag, clean_text(tag["data-label"]), clean_text(tag.get_text(" "))))
        elif tag.name == "dt":
            dd = tag.find_next_sibling(["dd", "dt"])
            if dd is not None and dd.name == "dd":
                pairs.append((tag, clean_text(tag.get_text(" ")), clean_text(dd.get_text(" "))))
        elif any("label" in c.lower() for c in tag.get("class", [])):
            # The value usually follows its label; some layouts put the caption under the value.
            value = tag.find_next_sibling(True) or tag.find_previous_sibling(True)
            if value is not None:
                pairs.append((tag, clean_text(tag.get_text(" ")), clean_text(value.get_text(" "))))
    return pairs


def _labelled_records(soup: BeautifulSoup) -> Iterator[_Record]:
    pairs = [p for p in _label_pairs(soup) if p[1]]
    # A row is the largest element around a labelled cell that holds no other cell with the
    # same label: the next level up would hold the neighbouring rows.
    same_label_below: dict[tuple[int, str], int] = {}
    for anchor, label, _ in pairs:
        key = normalize_header(label)
        for parent in anchor.parents:
            same_label_below[(id(parent), key)] = same_label_below.get((id(parent), key), 0) + 1
    roots: set[int] = set()
    for anchor, label, _ in pairs:
        key = normalize_header(label)
        root: Tag = anchor
        for parent in anchor.parents:
            if parent.name == "[document]" or same_label_below[(id(parent), key)] > 1:
                break
            root = parent
        roots.add(id(root))
    # Each cell belongs to the smallest row around it (a label that only one row has climbs
    # past its row on its own, so it joins the row its neighbours settled on).
    rows: dict[int, tuple[Tag, list[tuple[str, str]]]] = {}
    for anchor, label, value in pairs:
        row = next(node for node in (anchor, *anchor.parents) if id(node) in roots)
        rows.setdefault(id(row), (row, []))[1].append((label, value))
    for root, cells in rows.values():
        columns, _, _ = map_columns([label for label, _ in cells], _COLUMNS)
        if "price" not in columns and "gpu_price" not in columns:
            continue
        heading = root.find(_HEADINGS)
        context = clean_text(heading.get_text(" ")) if heading is not None else None
        yield _Record(
            header=tuple(label for label, _ in cells),
            cells=tuple(value for _, value in cells),
            context=context,
            text=clean_text(root.get_text(" ")),
        )


# ---------------------------------------------------------------- layout 3: server-component data

# A record's React key names its instance: "B300 SXM6-x 8-0" (table row), "B300 SXM6-mobile-x 8-0"
# (the phone card of the same row), or "H100 (80GB) x1".
_RECORD_KEY = re.compile(
    r"^(?P<name>.+?)(?:-mobile)?(?:-x\s?(?P<count>\d{1,3})-\d+|\s+[x\u00d7]\s?(?P<count2>\d{1,3}))$"
)
_KEYED_PROPS = re.compile(r'"((?:[^"\\]|\\.){1,160})",\{')
_FLIGHT_HEADER = ("GPU", "GPUs", "Price per hour", "vCPUs", "RAM", "Storage")
_LABELS = {"vcpu": 3, "vcpus": 3, "cpu": 3, "ram": 4, "memory": 4, "storage": 5, "disk": 5}


def _flight_records(text: str, soup: BeautifulSoup) -> Iterator[_Record]:
    """Instance records of the App Router payload (``self.__next_f.push`` chunks, or a saved fragment
    of them, escaped): each element keyed by the instance ("B300 SXM6-x 8-0") whose children hold the
    GPU count ("×", "8"), the instance price ("$$52.80" "/hr") and labelled specs (vCPU, RAM,
    Storage as <dt>/<dd>). The phone card and the table row of one instance are one record.

    Structure of a real payload: getcomputable/gpu-index
    tests/fixtures/observatory/massedcompute/pricing_rsc_excerpt.html @055204ad (2026-08-22); a
    saved fragment may run on through later push calls (the same file @d05766b3), read piece by
    piece (``next_data.fragment_flight_payload``). A record without memory columns takes each GPU's
    memory from its name ("H200 NVL (141GB)").
    """
    # a saved fragment (no page around it) starts inside a push string, outside any <script>
    fragment = not text.lstrip().startswith("<")
    payload = "" if fragment else flight_payload([s.get_text() for s in soup.find_all("script")])
    if not payload and '\\"' in text:
        payload = fragment_flight_payload(text)
    seen: set[tuple[str, ...]] = set()
    decoder = json.JSONDecoder()
    for match in _KEYED_PROPS.finditer(payload or ""):
        try:
            key = json.loads(f'"{match.group(1)}"')
            props, _ = decoder.raw_decode(payload, match.end() - 1)
        except (json.JSONDecodeError, ValueError):
            continue
        named = _RECORD_KEY.match(clean_text(key))
        if named is None or not GPU_NAME.search(named.group("name")):
            continue
        texts, labelled = _rsc_texts(props)
        price = next((t for t in texts if t.startswith("$")), "")  # "" for "Sold out": an unpriced record
        counts = [
            texts[i + 1] for i, t in enumerate(texts[:-1]) if t in ("\u00d7", "x") and texts[i + 1].isdigit()
        ]
        key_count = named.group("count") or named.group("count2")
        cells = ["", "", "", "", "", ""]
        cells[0] = clean_text(named.group("name"))
        cells[1] = counts[0] if counts else key_count
        if counts and counts[0] != key_count:
            cells[1] = f"{counts[0]} (key says {key_count})"  # rejected: the counts disagree
        at = texts.index(price) + 1 if price else len(texts)
        after = texts[at] if at < len(texts) else ""
        cells[2] = f"{price}{after}" if after.startswith("/") else price
        for label, value in labelled:
            column = _LABELS.get(normalize_header(label))
            if column is not None and not cells[column]:
                cells[column] = value
        record = tuple(cells)
        if record[:3] in seen:
            continue  # the phone card and the table row of one instance (the row's specs are unlabelled)
        seen.add(record[:3])
        yield _Record(header=_FLIGHT_HEADER, cells=record, context=None, text=" ".join(record))


def _rsc_texts(node: object) -> tuple[list[str], list[tuple[str, str]]]:
    """The visible strings under an RSC element tree, in order, and its (<dt>, <dd>) label pairs."""
    texts: list[str] = []
    pairs: list[tuple[str, str]] = []
    pending_label: list[str] = []

    def walk(item: object, tag: str | None) -> None:
        if isinstance(item, str):
            if not is_rsc_reference(item):
                value = clean_text(item[1:] if item.startswith("$$") else item)
                if value:
                    texts.append(value)
                    if tag == "dt":
                        pending_label.append(value)
                    elif tag == "dd" and pending_label:
                        pairs.append((pending_label.pop(), value))
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            walk(str(item), tag)
        elif isinstance(item, list):
            if len(item) >= 4 and item[0] == "$" and isinstance(item[1], str):
                props = item[3] if isinstance(item[3], dict) else {}
                walk(props.get("children"), item[1])
            else:
                for child in item:
                    walk(child, tag)
        elif isinstance(item, dict):
            walk(item.get("children"), tag)

    walk(node, None)
    return texts, pairs


# ---------------------------------------------------------------- rows -> offers


def _cell(record: _Record, columns: dict[str, int], name: str) -> str:
    return record.cells[columns[name]] if name in columns else ""


def _availability(text: str) -> bool | None:
    if not text:
        return None
    if _UNAVAILABLE.search(text):
        return False
    return True if _AVAILABLE.search(text) else None


def _gpu_count(
    record: _Record, columns: dict[str, int], sku: re.Match | None
) -> tuple[int | None, str | None]:
    """(count, None) or (None, reason): the SKU, the count column and an '8x' in the name must agree."""
    found: dict[str, int] = {}
    if sku is not None:
        found["SKU"] = int(sku.group(1))
    count_text = _cell(record, columns, "count")
    if count_text:
        number = parse_number(count_text)
        if number is None or number != int(number):
            return None, f"GPU count is not a whole number: {count_text!r}"
        found["GPU count column"] = int(number)
    for name in ("sku", "gpu"):
        text = _cell(record, columns, name)
        m = _COUNT_IN_NAME.search(text) if sku is None or name == "gpu" else None
        if m:
            found[f"{name} name"] = int(m.group(1))
    if not found:
        return None, "GPU count missing (no SKU like gpu_1x_..., count column or '1x' in the name)"
    if len(set(found.values())) > 1:
        said = ", ".join(f"{where} says {n}" for where, n in found.items())
        return None, f"GPU counts disagree: {said}"
    return next(iter(found.values())), None


def _resolve_gpu(gpu_text: str, sku_text: str, context: str | None) -> tuple[str, str | None]:
    """(slug, None) or ('', reason). The GPU column and the SKU are read together so that a bare
    'H200' next to gpu_8x_h200_sxm5 is the SXM5 part; explicit contradictions are rejected."""
    names = [t for t in (gpu_text, sku_text) if t] or ([context] if context else [])
    if not names:
        return "", "no GPU name (GPU column, SKU or section heading)"
    combined = normalize_gpu(" ".join(names), provider=PROVIDER)
    if combined == "unknown" and len(names) == 2:
        each = [normalize_gpu(n, provider=PROVIDER) for n in names]
        if "unknown" not in each and each[0] != each[1]:
            return "", f"GPU column ({gpu_text!r}) and SKU ({sku_text!r}) name different GPUs"
    return combined, None


def _record_prices(
    record: _Record, columns: dict[str, int], sink: OfferSink
) -> tuple[dict[str, Decimal], bool] | None:
    """The record's instance and per-GPU prices (those given) and whether one is a marketplace
    floor ("from $1.98"); None when a price cell is not a price (the record is rejected)."""
    report = sink.report
    prices: dict[str, Decimal] = {}
    is_from = False
    for name in ("price", "gpu_price"):
        try:
            header = (
                record.header[columns[name]]
                if name in columns and columns[name] < len(record.header)
                else None
            )
            price = parse_price(_cell(record, columns, name), header=header)
        except ValueError:
            sink.reject(
                record.raw,
                f"not a price in column {record.header[columns[name]]!r}: {_cell(record, columns, name)!r}",
            )
            return None
        if price is not None:
            prices[name] = price.value
            if price.is_from:  # marketplace floor ("from $1.98"): the cheapest host right now
                is_from = True
                report.notes.append(f"'from' price read as the price: {record.raw}")
    return prices, is_from


def _add_offer(record: _Record, columns: dict[str, int], sink: OfferSink) -> None:
    """The record's offer into the sink, or the record counted as unpriced or rejected."""
    read = _record_prices(record, columns, sink)
    if read is None:
        return
    prices, is_from = read
    if not prices:
        sink.report.unpriced_rows += 1
        return

    sku_cell = _cell(record, columns, "sku")
    sku_match = _SKU.search(sku_cell) or _SKU.search(record.text)
    count, problem = _gpu_count(record, columns, sku_match)
    if count is None:
        sink.reject(record.raw, problem or "GPU count missing")
        return
    if count < 1:
        sink.reject(record.raw, f"GPU count {count} is not positive")
        return

    gpu_text = _cell(record, columns, "gpu")
    sku_text = sku_match.group(0) if sku_match else sku_cell
    gpu, problem = _resolve_gpu(gpu_text, sku_text, record.context)
    if problem:
        sink.reject(record.raw, problem)
        return
    gpu_raw = gpu_text or sku_text or record.context or ""
    if gpu == "unknown":
        sink.note_unknown_gpu(gpu_raw)

    vram = size_gb(_cell(record, columns, "vram")) if "vram" in columns else None
    if vram and "total" in normalize_header(record.header[columns["vram"]]):
        vram /= count
    if not vram:  # "H200 NVL (141GB)": the instance name states each GPU's memory
        in_name = _MEMORY_IN_NAME.search(gpu_raw)
        vram = float(in_name.group(1)) if in_name else None
    per_instance = prices.get("price")
    listed_per_gpu = prices.get("gpu_price")
    # The instance price is what is billed; a per-GPU column (often rounded to cents) only checks it.
    per_gpu = per_instance / count if per_instance is not None else listed_per_gpu
    if (
        per_instance is not None
        and listed_per_gpu is not None
        and abs(listed_per_gpu - per_gpu) > _PER_GPU_TOLERANCE
    ):
        sink.reject(
            record.raw,
            f"per-GPU price ${listed_per_gpu} disagrees with instance price ${per_instance} / {count} GPUs",
        )
        return
    sink.add(
        record.raw,
        reason_prefix="invalid offer: ",
        gpu=gpu,
        gpu_raw=gpu_raw,
        gpu_count=count,
        vram_gb=vram or None,
        tier="on_demand",  # Massed Compute sells on-demand only
        usd_per_gpu_hour=float(per_gpu),
        usd_per_instance_hour=float(per_instance) if per_instance is not None else None,
        region=_cell(record, columns, "region") or None,
        available=_availability(_cell(record, columns, "available")),
        sku=sku_text or f"{count}x {gpu_raw}",
        vcpus=parse_number(_cell(record, columns, "vcpus")) or None,
        ram_gb=size_gb(_cell(record, columns, "ram")) or None,
        storage_gb=size_gb(_cell(record, columns, "storage")),
        price_basis="from" if is_from else "list",
    )
