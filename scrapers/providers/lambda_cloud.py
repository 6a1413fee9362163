"""Lambda: the instance tables of lambda.ai/pricing (and the older lambdalabs.com layout).

Structure as documented in provider-pages.md (Lambda section):

- current page: four ``<table>``s behind tabs 8x / 4x / 2x / 1x with the columns
  ``Plan | VRAM/GPU | vCPUs | RAM | STORAGE | PRICE/GPU/HR*``; plans read
  "On-demand 8x NVIDIA H100 SXM" (prefix stripped; GPU count from the tab, checked against the
  plan's "8x" when both exist);
- 2023 page (lambdalabs.com/service/gpu-cloud, archived 2023-09-09): the plan column headed "GPUs"
  ("8x NVIDIA A100", a "New" tag beside it, not part of the name) priced per instance ("$8.80 / hr"),
  and a Reserved Cloud Cluster table priced per GPU by model ("$1.89/H100/hour") with a Term;
- an excerpt cut inside the table keeps its rows without the <table> and the header row: columns
  are then read from what the first row's cells hold, in Lambda's column order;
- older page (lambdalabs.com/service/gpu-cloud): the same table as escaped HTML inside a script
  string (Next.js streamed data, ``self.__next_f.push([1,"..."])``), cells labelled with
  ``data-label="PRICE/GPU/HR*"``.

Columns are mapped by header text (or by each cell's ``data-label``). A price column whose header
names the GPU ("PRICE/GPU/HR") is per GPU and ``usd_per_instance_hour`` stays None, since the page
does not state it; a plain "Price" column is per instance unless its cells say "/GPU" (the 2023
pages priced whole instances). RAM and storage are converted to GB (1e9 bytes) from the unit the
page shows (GiB, TiB, TB; bare numbers are read as GB). A plan name without memory ("NVIDIA A100
SXM", sold with 40 GB and with 80 GB) gets the memory in its sku when the name alone would name
the other part, so both rows are kept (``offer_sink.sku_naming_memory``).

1-Click Clusters (a real capture: getcomputable/gpu-index
tests/fixtures/observatory/lambda/pricing.html @055204ad, 2026-08-22) are tables with a DURATION
column ("2 weeks – 1 year") and a GPU COUNT column ("16", "64", "256+"): contract prices, stored as
``reserved`` with ``price_basis`` "contract" and the shortest term as ``commitment_months`` (whole
months, rounded up: two weeks -> 1), the duration kept in the sku. "1 year+" rows say "Talk to our
team": unpriced.

The Cloud API's ``GET /instance-types`` response (JSON, needs a key to fetch, kept by public
projects) parses too: ``price_cents_per_hour`` is the instance's price, ``specs.gpus`` its GPU count
(else the name's "gpu_8x_"), ``gpu_description`` the GPU ("H100 (80 GB SXM5)"); available when
``regions_with_capacity_available`` lists a region.

Over 400 lines: the current tables, the older escaped-HTML page and the 1-Click Cluster tables all
become one ``_Row`` and one rule turns a row into offers (``_emit_row``); split apart, a reader
would lose that shared path.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from bs4 import BeautifulSoup, Tag

from gpuprice.bounded_load import load_json
from gpuprice.scrapers.gpu_names import UNKNOWN, normalize_gpu
from gpuprice.scrapers.identity import Identity
from gpuprice.scrapers.next_data import next_f_strings
from gpuprice.scrapers.offer import ParseResult, PriceUnit, StructureMissing, Tier
from gpuprice.scrapers.offer_sink import FROM_PRICE_NOTE, OfferSink, sku_naming_memory
from gpuprice.scrapers.page_input import page_text
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.parsing import cell_text, clean_text, map_columns, parse_number, parse_price
from gpuprice.scrapers.quantities import size_gb, term_months

PROVIDER = "lambda"
PARSER_VERSION = "lambda/5"  # 5: pricing-table classes and PRICE/GPU/HR are its page structure
PRICING_URL = "https://lambda.ai/pricing"
# Lambda sells on-demand only on the page (reserved and clusters go through sales).
UNLABELED_TIER: Tier | None = "on_demand"
PRICE_UNIT: PriceUnit = "gpu_hour"
IDENTITY = Identity(
    PROVIDER,
    domains=("lambda.ai", "lambdalabs.com"),
    # "Lambda" the company, not "AWS Lambda" (Amazon's functions service).
    brands=(r"(?<!AWS )(?<!Amazon )\bLambda\b",),
    markers=(
        r"\b1-Click Clusters?\b",  # Lambda's product name
        r"\bprice_cents_per_hour\b",  # the Cloud API's instance-types fields
        r"\bregions_with_capacity_available\b",
        # the pricing tables of lambda.ai (CSS-module classes "_pricingTable_3954x_13",
        # "_pricingRow_z1nfw_36") and their price column: an excerpt of the instance table carries no
        # site or brand (henryzhangpku/gpu-price-index tests/fixtures/backfill/lambda_20260109103934.html)
        r"\b_pricing(?:Table|Row)_[0-9a-z]{5}_\d+\b",
        r"\bPRICE/GPU/HR\b",
    ),
)
INSTANCES_URL = "https://lambda.ai/instances"

_COLUMNS: dict[str, tuple[str, ...]] = {
    "count": (r"^(gpus|gpu count|number of gpus|gpus per instance)$",),
    "region": (r"\bregions?\b", r"\blocation\b", r"data ?cent(er|re)"),
    # 1-Click Clusters: "DURATION" ("2 weeks – 1 year"), the contract's term.
    "duration": (r"^(duration|term|contract|commitment)( length)?$",),
    "plan": (r"^plan\b", r"instance type", r"^instance\b", r"^(gpu|name|model)\b", r"^$"),
    "vram": (r"vram", r"gpu mem"),
    "vcpus": (r"vcpu", r"\bcpus?\b", r"\bcores?\b"),
    "ram": (r"^ram\b", r"\bram\b", r"memory"),
    "storage": (r"storage", r"\bssd\b", r"disk", r"nvme"),
    "price_gpu": (r"price.*\bgpu\b", r"\bgpu\b.*\b(hr|hour)\b", r"per gpu"),
    "price_instance": (r"price.*\b(instance|node|server)\b", r"\b(instance|node)\b.*\b(hr|hour)\b"),
    "price": (r"price", r"\bcost\b", r"\$", r"\b(hr|hour)\b"),
}
_PRICE_COLUMNS = ("price_gpu", "price_instance", "price")
_SPEC_COLUMNS = ("vram", "vcpus", "ram", "storage")

_PLAN_RX = re.compile(
    r"^(?:(?P<tier>on[\s-]*demand|reserved|spot)\b\s*[:\-\u2013]?\s*)?(?:(?P<count>\d+)\s*[x\u00d7]\s+)?(?P<gpu>.+)$",
    re.I,
)
_COUNT_LABEL_RX = re.compile(r"(?<![\d.])(\d{1,3})\s*[x\u00d7](?![a-z0-9])", re.I)
_VRAM_IN_NAME_RX = re.compile(r"(\d+(?:\.\d+)?)\s*GB", re.I)
_TAB_TEXT_RX = re.compile(r"^(\d{1,3})\s*(?:[x\u00d7]|gpus?\b)", re.I)  # "8x", "8x GPUs", "8 GPUs"
_RSC_TAGS = {
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "caption",
    "div",
    "section",
    "span",
    "p",
    "button",
    "strong",
    "b",
}
_RSC_ATTRS = {"id", "role", "aria-label", "aria-labelledby", "aria-controls"}
_EMBEDDED_HINT = re.compile(r"data-label|\\u003ctd|<td", re.I)


def live_requests() -> list[PageRequest]:
    """The public pricing page, then the instances page with the same tables as a fallback
    (lambdalabs.com URLs redirect to lambda.ai; the REST API needs a key)."""
    return [
        PageRequest(url=PRICING_URL, kind="html"),
        PageRequest(url=INSTANCES_URL, kind="html", fallback=True),
    ]


def parse(content: bytes, observed_on: dt.date | None = None) -> ParseResult:
    """Parse Lambda's pricing page, or a Cloud API ``/instance-types`` response (sniffed from the
    content). ``observed_on`` is unused: Lambda posts no scheduled prices."""
    sink = OfferSink(PROVIDER)
    text = page_text(content, sink.report)
    instance_types = _api_instance_types(text)
    if instance_types is not None:
        for key, entry in instance_types.items():
            sink.report.rows_seen += 1
            _emit_instance_type(clean_text(key), entry, sink)
        return sink.result()
    soup = BeautifulSoup(text, "lxml")
    tables = _price_tables(soup, sink)
    if not tables:
        fragment, how = _embedded_table_html(soup)
        if fragment:
            tables = _price_tables(BeautifulSoup(fragment, "lxml"), sink)
            sink.report.notes.append(how)
    if not tables:
        raise StructureMissing(
            PROVIDER, "no instance table with Plan and PRICE columns (login/captcha page or layout change)"
        )
    for table in tables:
        for row in table.rows:
            sink.report.rows_seen += 1
            _emit_row(row, table.tab_count, sink)
    return sink.result()


# --- the Cloud API --------------------------------------------------------------------------------

_API_COUNT_RX = re.compile(r"^gpu_(\d{1,3})x_", re.I)  # "gpu_8x_h100_sxm5"


def _api_instance_types(text: str) -> dict[str, Any] | None:
    """The ``data`` map of a Cloud API ``GET /instance-types`` response, or None for any other page:
    ``{"data": {"gpu_8x_h100_sxm5": {"instance_type": {"name", "description", "gpu_description",
    "price_cents_per_hour", "specs": {"vcpus", "memory_gib", "storage_gib", "gpus"}},
    "regions_with_capacity_available": [{"name": ...}]}}}`` (Lambda's API reference; real responses
    as public projects keep them, trimmed, e.g. d0cd/dispatcher)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        payload = load_json(text)
    except ValueError:
        return None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, dict) or not data:
        return None
    if not all(isinstance(v, dict) and isinstance(v.get("instance_type"), dict) for v in data.values()):
        return None
    return data


def _emit_instance_type(key: str, entry: dict[str, Any], sink: OfferSink) -> None:
    """One instance type: ``price_cents_per_hour`` is the whole instance's price in cents, per GPU
    is that over ``specs.gpus`` (or the count in the name, "gpu_8x_..."); available when some region
    has capacity. The price is the same in every region, so the offer names none."""
    instance = entry["instance_type"]
    name = clean_text(instance.get("name")) or key
    specs = instance.get("specs") if isinstance(instance.get("specs"), dict) else {}
    raw = (
        f"{name} | price_cents_per_hour={instance.get('price_cents_per_hour')!r} | gpus={specs.get('gpus')!r}"
    )
    cents = instance.get("price_cents_per_hour")
    if cents is None or cents == 0:
        sink.report.unpriced_rows += 1
        return
    if isinstance(cents, bool) or not isinstance(cents, (int, float)) or cents < 0:
        sink.reject(raw, f"not a price in cents: {cents!r}")
        return
    gpus = specs.get("gpus")
    named = _API_COUNT_RX.match(name)
    count = gpus if isinstance(gpus, int) and not isinstance(gpus, bool) and gpus >= 1 else None
    if count is None and named:
        count = int(named.group(1))
    if count is None:
        sink.reject(raw, "GPU count missing (no specs.gpus and no 'gpu_Nx_' in the name)")
        return
    if named and int(named.group(1)) != count:
        sink.reject(raw, f"GPU count mismatch: specs.gpus says {count}, name says {named.group(1)}x")
        return
    gpu_raw = clean_text(instance.get("gpu_description")) or name
    in_name = _VRAM_IN_NAME_RX.search(gpu_raw)
    vram = float(in_name.group(1)) if in_name else None
    price = Decimal(str(cents)) / 100
    regions = entry.get("regions_with_capacity_available")
    sink.add(
        raw,
        gpu=sink.gpu_slug(gpu_raw, vram, name),
        gpu_raw=gpu_raw,
        gpu_count=count,
        vram_gb=vram,
        tier="on_demand",
        usd_per_gpu_hour=price / count,
        usd_per_instance_hour=price,
        available=bool(regions) if isinstance(regions, list) else None,
        sku=name,
        vcpus=parse_number(specs.get("vcpus")) if specs.get("vcpus") is not None else None,
        ram_gb=size_gb(specs.get("memory_gib"), default_unit="GiB") or None,
        storage_gb=size_gb(specs.get("storage_gib"), default_unit="GiB") or None,
    )


# --- finding the tables ------------------------------------------------------------------------


@dataclass
class _Row:
    cells: dict[str, str]  # logical column -> cell text
    raw: str
    headers: dict[str, str] = field(default_factory=dict)  # logical column -> header text


@dataclass
class _Table:
    rows: list[_Row]
    tab_count: int | None


def _price_tables(soup: BeautifulSoup, sink: OfferSink) -> list[_Table]:
    """Every table that has a plan column and a price column, with its tab's GPU count."""
    found: list[_Table] = []
    for table in soup.find_all("table"):
        # a nested table is visited on its own
        rows = list(
            _table_rows([tr for tr in table.find_all("tr") if tr.find_parent("table") is table], sink)
        )
        if rows:
            found.append(_Table(rows=rows, tab_count=_tab_count(table, soup)))
    # an excerpt cut inside a table keeps its rows without the <table> around them (and without
    # its header row: henryzhangpku/gpu-price-index tests/fixtures/backfill/lambda_20241103180910.html)
    orphans = list(_table_rows([tr for tr in soup.find_all("tr") if tr.find_parent("table") is None], sink))
    if orphans:
        found.append(_Table(rows=orphans, tab_count=None))
    return found


def _table_rows(trs: list[Tag], sink: OfferSink) -> Iterator[_Row]:
    """Body rows as {logical column: text}, headers from each cell's data-label or the header row
    (or, when the header row was cut off, from what the first row's cells hold)."""
    mapping: dict[str, int] | None = None  # from the header row, once seen
    header_texts: list[str] = []
    by_labels: dict[tuple[str, ...], dict[str, int]] = {}  # data-label sets seen so far
    for tr in trs:
        for badge in tr.find_all(class_=_BADGE_CLASS_RX):
            badge.decompose()  # "1x NVIDIA H100 PCIe <span class="tag">New</span>": not part of the name
        cells = tr.find_all(["td", "th"], recursive=False)
        texts = [cell_text(cell) for cell in cells]
        if not any(texts):
            continue
        labels = tuple(clean_text(cell.get("data-label")) for cell in cells)
        if all(labels):
            if labels not in by_labels:
                by_labels[labels] = _mapping(list(labels), sink)
            row_mapping = by_labels[labels]
            row_headers = list(labels)
        elif mapping is None and _is_header_row(tr, cells, texts):
            mapping = _mapping(texts, sink)
            header_texts = texts
            continue
        elif mapping is None:
            mapping, header_texts = _mapping_by_content(texts)
            if not mapping:
                return  # data before any header, in no column order Lambda writes: not a price table
            row_mapping = mapping
            row_headers = header_texts
        else:
            row_mapping = mapping
            row_headers = header_texts
        if row_mapping:
            yield _Row(
                cells={name: texts[i] for name, i in row_mapping.items() if i < len(texts)},
                raw=" | ".join(texts),
                headers={name: row_headers[i] for name, i in row_mapping.items() if i < len(row_headers)},
            )


_BADGE_CLASS_RX = re.compile(r"^(?:tag|badge|pill)$", re.I)
# What each of Lambda's columns holds (Plan | VRAM/GPU | vCPUs | RAM | STORAGE | PRICE/GPU/HR), for a
# table whose header row is missing: (column, the header it stands for, what its cells look like).
_CELL_KINDS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("vram", "VRAM/GPU", re.compile(r"^\d+(?:\.\d+)?\s*GB$", re.I)),
    ("vcpus", "vCPUs", re.compile(r"^\d{1,3}$")),
    ("ram", "RAM", re.compile(r"^\d+(?:\.\d+)?\s*(?:GiB|GB|TB)$", re.I)),
    ("storage", "STORAGE", re.compile(r"^\d+(?:\.\d+)?\s*(?:GiB|TiB|TB)\b.*(?:SSD|NVMe)?", re.I)),
    ("price", "PRICE", re.compile(r"\$\s*\d")),
)


def _mapping_by_content(texts: list[str]) -> tuple[dict[str, int], list[str]]:
    """Columns of a row with no header above it, by what its cells hold: a plan with its count
    ("On-demand 8x NVIDIA H100 SXM") first, then Lambda's spec columns in their order and a price;
    ({}, []) when the row is not one."""
    plan = _PLAN_RX.match(texts[0]) if texts else None
    if plan is None or not plan["count"]:
        return {}, []
    mapping, headers = {"plan": 0}, ["Plan"] + [""] * (len(texts) - 1)
    kinds = iter(_CELL_KINDS)
    for index, text in enumerate(texts[1:], start=1):
        for name, header, pattern in kinds:
            if pattern.search(text):
                mapping[name], headers[index] = index, header
                break
    return (mapping, headers) if "price" in mapping else ({}, [])


def _is_header_row(tr: Tag, cells: list[Tag], texts: list[str]) -> bool:
    if tr.find_parent("thead") or all(cell.name == "th" for cell in cells):
        return True
    return not any("$" in text for text in texts)  # a first row of labels written with <td>


def _mapping(headers: list[str], sink: OfferSink) -> dict[str, int]:
    """Logical column -> position, or {} when the table lacks a plan or a price column."""
    mapping, _, unexpected = map_columns(headers, _COLUMNS)
    if "plan" not in mapping and "count" in mapping:
        # the 2023 page's "GPUs" column names the plan with its count ("8x NVIDIA A100")
        mapping["plan"] = mapping.pop("count")
    if "plan" not in mapping or not any(name in mapping for name in _PRICE_COLUMNS):
        return {}
    sink.note_columns(missing=[name for name in _SPEC_COLUMNS if name not in mapping], unexpected=unexpected)
    return mapping


def _tab_count(table: Tag, soup: BeautifulSoup) -> int | None:
    """The GPU count of the tab holding the table ("8x"), from its caption or the tab panel.

    A panel names its tab through ``aria-labelledby``, the tab's ``aria-controls``, a shared
    Webflow ``data-w-tab`` value, or a label in its own id / aria-label / data-* attributes.
    """
    caption = table.find("caption")
    if caption:
        match = _COUNT_LABEL_RX.search(clean_text(caption.get_text(" ")))
        if match:
            return int(match.group(1))
    for depth, ancestor in enumerate(table.parents):
        if depth > 6 or ancestor.name in ("body", "html", "[document]"):
            break
        for tab in _tabs_naming(ancestor, soup):
            match = _TAB_TEXT_RX.match(clean_text(tab.get_text(" ")))
            if match:
                return int(match.group(1))
        for name, value in ancestor.attrs.items():
            if isinstance(value, str) and (name in ("id", "aria-label") or name.startswith("data-")):
                match = _COUNT_LABEL_RX.search(clean_text(value))
                if match:
                    return int(match.group(1))
    return None


def _tabs_naming(panel: Tag, soup: BeautifulSoup) -> Iterator[Tag]:
    """Tab buttons/links that point at ``panel``."""
    labelledby = panel.get("aria-labelledby")
    if isinstance(labelledby, str) and labelledby.split():
        tab = soup.find(id=labelledby.split()[0])
        if tab is not None:
            yield tab
    panel_id = panel.get("id")
    if isinstance(panel_id, str) and panel_id:
        yield from soup.find_all(attrs={"aria-controls": panel_id})
    webflow_tab = panel.get("data-w-tab")
    if isinstance(webflow_tab, str):
        yield from (tab for tab in soup.find_all(attrs={"data-w-tab": webflow_tab}) if tab is not panel)


def _embedded_table_html(soup: BeautifulSoup) -> tuple[str, str]:
    """(table HTML, how it was found) from scripts (Next.js ``self.__next_f.push([1, "..."])``).

    The chunks hold either escaped HTML or React Server Component rows
    (``["$","td",null,{"data-label":"PRICE/GPU/HR*","children":"$$2.49"}]``); the latter are
    rebuilt as HTML. Chunks may split the table anywhere, so they are joined in page order first.
    """
    chunks: list[str] = []
    for script in soup.find_all("script"):
        code = script.string or ""
        if "__next_f" in code:
            chunks.extend(next_f_strings(code))
        elif _EMBEDDED_HINT.search(code):
            chunks.extend(_json_string_literals(code))
    joined = "".join(chunks)
    escaped_html = _table_span(joined)
    if escaped_html:
        return escaped_html, "table read from escaped HTML in script data (older Next.js layout)"
    return _table_span(
        _rsc_html_rows(joined)
    ), "table rebuilt from React Server Component rows in script data"


def _table_span(text: str) -> str:
    """From the first ``<table`` (or ``<tr``) to the last closing tag, wrapped in a table."""
    lowered = text.lower()
    start = lowered.find("<table")
    if start == -1:
        start = lowered.find("<tr")
    end = max(lowered.rfind("</table>") + len("</table>"), lowered.rfind("</tr>") + len("</tr>"))
    if start == -1 or end <= start:
        return ""
    span = text[start:end]
    return span if span.lower().startswith("<table") else f"<table>{span}</table>"


def _rsc_html_rows(payload: str) -> str:
    """HTML rebuilt from the RSC rows (``<id>:<json>`` lines) that contain table rows."""
    parts: list[str] = []
    for line in payload.splitlines():
        _, colon, body = line.partition(":")
        if not colon or body[:1] not in ("[", "{") or '"td"' not in body:
            continue
        try:
            tree = json.loads(body)
        except json.JSONDecodeError:
            continue
        parts.append(_rsc_html(tree))
    return "".join(parts)


def _rsc_html(node: Any) -> str:
    if isinstance(node, str):
        if node.startswith("$$"):  # RSC escapes a literal leading "$" as "$$"
            return html.escape(node[1:])
        return "" if node.startswith("$") else html.escape(node)  # "$L3", "$undefined": references
    if isinstance(node, (int, float)) and not isinstance(node, bool):
        return str(node)
    if not isinstance(node, list):
        return ""
    if len(node) >= 4 and node[0] == "$" and isinstance(node[1], str):
        props = node[3] if isinstance(node[3], dict) else {}
        inner = _rsc_html(props.get("children"))
        tag = node[1]
        if tag not in _RSC_TAGS:  # a component reference: keep what it renders
            return inner
        attrs = "".join(
            f' {name}="{html.escape(str(value))}"'
            for name, value in props.items()
            if isinstance(value, (str, int)) and (name in _RSC_ATTRS or name.startswith("data-"))
        )
        return f"<{tag}{attrs}>{inner}</{tag}>"
    return "".join(_rsc_html(child) for child in node)


def _json_string_literals(code: str) -> list[str]:
    strings: list[str] = []
    for literal in re.finditer(r'"(?:[^"\\]|\\.)*"', code):
        if _EMBEDDED_HINT.search(literal.group(0)):
            try:
                strings.append(json.loads(literal.group(0)))
            except json.JSONDecodeError:
                continue
    return strings


# --- one row -> one offer ----------------------------------------------------------------------


def _emit_row(row: _Row, tab_count: int | None, sink: OfferSink) -> None:
    plan = row.cells.get("plan", "")
    match = _PLAN_RX.match(plan)
    if not plan or not match:
        sink.reject(row.raw, "row without a plan name")
        return
    gpu_raw = clean_text(match["gpu"])
    price_cells = {name: row.cells[name] for name in _PRICE_COLUMNS if row.cells.get(name)}
    try:
        prices = {name: parse_price(text, header=row.headers.get(name)) for name, text in price_cells.items()}
    except ValueError as exc:
        sink.reject(row.raw, str(exc))
        return
    prices = {name: price for name, price in prices.items() if price is not None and price.value > 0}
    if not prices:
        sink.report.unpriced_rows += 1  # "Contact sales", "Sold out", "-" or empty: never 0
        return
    if any(price.is_from for price in prices.values()):
        sink.note(FROM_PRICE_NOTE)

    plan_count = int(match["count"]) if match["count"] else None
    column_count = _count_cell(row.cells.get("count"))
    if plan_count and column_count and plan_count != column_count:
        sink.reject(row.raw, f"GPU count mismatch: GPUs column says {column_count}, plan says {plan_count}x")
        return
    plan_count = plan_count or column_count
    if plan_count and tab_count and plan_count != tab_count:
        sink.reject(row.raw, f"GPU count mismatch: tab says {tab_count}x, plan says {plan_count}x")
        return
    count = plan_count or tab_count
    if not count:
        sink.reject(row.raw, "GPU count missing (no tab label and no 'Nx' in the plan)")
        return
    tier = (match["tier"] or "on-demand").lower().replace(" ", "-")
    duration = row.cells.get("duration") or ""
    contract_months = _contract_months(duration) if duration else None
    if duration and contract_months is None:
        sink.reject(row.raw, f"contract price without a term Lambda states: duration {duration!r}")
        return
    if tier.startswith("reserved") and contract_months is None:
        sink.reject(row.raw, "reserved plan without a commitment term")
        return

    vram = parse_number(row.cells.get("vram"))
    if vram is None:
        in_name = _VRAM_IN_NAME_RX.search(gpu_raw)
        vram = float(in_name.group(1)) if in_name else None
    per_gpu, per_instance = _unit_prices(prices, price_cells, count)
    sink.add(
        row.raw,
        gpu=sink.gpu_slug(gpu_raw, vram),
        gpu_raw=gpu_raw,
        gpu_count=count,
        vram_gb=vram,
        tier="reserved" if contract_months is not None else ("spot" if tier == "spot" else "on_demand"),
        commitment_months=contract_months,
        usd_per_gpu_hour=per_gpu,
        usd_per_instance_hour=per_instance,
        region=row.cells.get("region") or None,
        sku=f"{sku_naming_memory(f'{count}x {gpu_raw}', gpu_raw, vram, PROVIDER)}"
        + (f" [cluster, {duration}]" if contract_months is not None else ""),
        vcpus=parse_number(row.cells.get("vcpus")),
        ram_gb=size_gb(row.cells.get("ram")) or None,
        storage_gb=size_gb(row.cells.get("storage")) or None,
        # "from $x": a floor; a 1-Click Cluster price: a contract agreed for a term and a GPU count
        price_basis="contract"
        if contract_months is not None
        else ("from" if any(price.is_from for price in prices.values()) else "list"),
    )


_WEEKS_RX = re.compile(r"(\d+)\s*(?:-\s*)?weeks?\b", re.I)
_DAYS_PER_MONTH = 365.25 / 12


def _contract_months(duration: str) -> int | None:
    """The shortest term of a contract duration, in whole months rounded up ("2 weeks – 1 year" -> 1:
    two weeks of commitment is billed within the first month; "1 year+" -> 12); None if no term."""
    shortest = re.split(r"\s*(?:[\u2013\u2014-]|to)\s+|\+", clean_text(duration))[0]
    weeks = _WEEKS_RX.search(shortest)
    if weeks:
        return max(1, math.ceil(int(weeks.group(1)) * 7 / _DAYS_PER_MONTH))
    return term_months(shortest)


def _count_cell(text: str | None) -> int | None:
    """A GPU count cell: "8", "8x", "8 ×", or a cluster's smallest size "256+"."""
    match = re.fullmatch(r"\s*(\d{1,3})\s*(?:[x\u00d7]|\+)?\s*", text or "")
    return int(match.group(1)) if match and int(match.group(1)) >= 1 else None


_PER_UNIT_RX = re.compile(r"(?:/|\bper)\s*([a-z0-9-]+)\b", re.I)


def _names_a_gpu_unit(cell: str) -> bool:
    """A price per GPU by its cell: "$2.99 / GPU / hr", "per GPU", or per the GPU model itself
    ("$1.89/H100/hour" on the 2023 Reserved Cloud Cluster table)."""
    return any(
        unit.lower() == "gpu" or normalize_gpu(unit, provider=PROVIDER) != UNKNOWN
        for unit in _PER_UNIT_RX.findall(cell)
    )


def _unit_prices(prices: dict[str, Any], cells: dict[str, str], count: int) -> tuple[Decimal, Decimal | None]:
    """(per GPU-hour, per instance-hour or None) from whichever price columns the page has."""
    per_gpu = prices["price_gpu"].value if "price_gpu" in prices else None
    per_instance = prices["price_instance"].value if "price_instance" in prices else None
    if "price" in prices and per_gpu is None and per_instance is None:
        if _names_a_gpu_unit(cells["price"]):
            per_gpu = prices["price"].value
        else:
            per_instance = prices["price"].value
    if per_gpu is None:
        assert per_instance is not None
        per_gpu = per_instance / count
    return per_gpu, per_instance
