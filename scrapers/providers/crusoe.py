"""Crusoe: crusoe.ai/cloud/pricing, a Webflow grid of GPU cards priced per GPU-hour.

A card has a heading ("NVIDIA H100"), tags (VRAM "80GB", form factor "HGX"/"SXM"/"PCIe") and
labelled price cells ("On-demand" "$3.90/GPU-hr", "Spot" "$1.60/GPU-hr", "1-year reserved"
"Contact sales"). Class names on Webflow pages change with every redesign, so nothing here
depends on them:

- a *card* is the largest element around a heading that holds no other heading;
- a *price cell* is the smallest element whose text is a dollar price or an unpriced marker;
- each *label* (text naming on-demand, spot or reserved) claims the price cell nearest to it in
  the page structure, so labels may sit before, after or around their prices; a price never
  goes to a label across another label (an empty cell stays empty).

``rows_seen`` counts cards with a price cell; a card whose labelled cells are all "Contact sales"
is an unpriced row. The first price in a card is the on-demand price (the documented card
structure), so when it carries no label and no other cell is labelled on-demand it is read as
on-demand; any other price without a label is rejected, never guessed. A reserved price needs a
term in its label ("1-year reserved", "Reserved (1 year)" -> 12 months); without one the cell is
rejected rather than guessed.
Webflow's hidden conditional items (``w-condition-invisible``) are not shown to visitors and
are skipped; when the grid sits in Webflow tabs, a tab pane's name (``data-w-tab="Spot"``)
labels the prices inside it.

The 2026 page prices other products in the same card grid under their own section headings
("Self-Serve Deployments pricing": inference endpoints per GPU-hour); those sections are dropped
before reading, with a note (``scrapers/page_sections.py``).

Over 400 lines: the page's layouts (card grid, tables, Webflow tabs) all become one ``_Card`` and one
rule turns a card into offers (``_card_offers``); split apart, a reader would lose that shared path.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, NavigableString, Tag

from gpuprice.scrapers.fallback_reader import GPU_NAME
from gpuprice.scrapers.grids import div_grid_cells
from gpuprice.scrapers.identity import Identity
from gpuprice.scrapers.offer import Offer, ParseResult, PriceUnit, StructureMissing, Tier
from gpuprice.scrapers.offer_sink import OfferSink
from gpuprice.scrapers.page_input import BROWSER_HEADERS, UNDECODABLE_NOTE_SEMICOLON, page_text
from gpuprice.scrapers.page_sections import SKIPPED_NOTE, drop_other_product_sections
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.parsing import (
    DOLLAR_PRICE,
    Price,
    cell_text,
    clean_text,
    map_columns,
    parse_number,
    parse_price,
)
from gpuprice.scrapers.quantities import term_months

PROVIDER = "crusoe"
PARSER_VERSION = "crusoe/4"
PRICING_URL = "https://crusoe.ai/cloud/pricing"
# The first price in a card is the on-demand one (documented card structure).
UNLABELED_TIER: Tier | None = "on_demand"
PRICE_UNIT: PriceUnit = "gpu_hour"
IDENTITY = Identity(
    PROVIDER,
    domains=("crusoe.ai", "crusoecloud.com"),
    brands=(r"(?i)\bcrusoe\b",),
    markers=(r"\bprixing-item\b",),  # the pricing grid's own (misspelt) Webflow class
)

# The label given to a card's unlabelled first price (on-demand by the documented structure).
UNLABELLED_FIRST_PRICE = "on-demand (first price, unlabelled)"
_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_HEADING_CLASS = re.compile(r"heading|title|(gpu|card|product|model)[-_]?name", re.I)
_SKIPPED_TAGS = ("script", "style", "noscript", "template", "svg", "head")
_HIDDEN_CLASS = "w-condition-invisible"  # Webflow: conditionally hidden collection items
_MAX_CELL_CHARS = 80

# Prices in other units on the same page (storage per GiB-month, CPU per vCPU-hour) are not GPU-hours.
_OTHER_UNIT = re.compile(
    r"/\s*(gi?b|tb|tib|vcpu|cpu|core|mo|month|year)\b|\bper\s+(gi?b|tb|vcpu|month)\b|-month\b", re.I
)
# Unpriced cells: "Contact sales" and friends, or a cell that is only a dash / "N/A".
_UNPRICED_MARKER = re.compile(
    r"contact\s*(?:us|sales)|talk\s+to\s+(?:us|sales)|coming\s+soon|sold\s+out|request\s+(?:access|quote|pricing)"
    r"|^[-\u2013\u2014]$|^n/?a$",
    re.I,
)
_SPOT_LABEL = re.compile(r"\b(spot|preemptible|interruptible)\b", re.I)
_RESERVED_LABEL = re.compile(r"\b(reserved|reservation|commit(ted|ment)?)\b", re.I)
_ON_DEMAND_LABEL = re.compile(r"\bon[\s\-]?demand\b|\bpay[\s\-]as[\s\-]you[\s\-]go\b", re.I)
_VRAM_TAG = re.compile(r"^(\d+(?:\.\d+)?)\s*GB(?:\s*(?:HBM\w*|GDDR\w*|VRAM))?$", re.I)
_FORM_FACTOR_TAG = re.compile(r"^(HGX|DGX|SXM\d?|PCIe(?:\s*Gen\s*\d)?|NVL|NVLink|OAM)$", re.I)


def live_requests() -> list[PageRequest]:
    return [PageRequest(url=PRICING_URL, kind="html", headers=dict(BROWSER_HEADERS))]


@dataclass
class _Cell:
    """One labelled price cell of a card."""

    label: str
    text: str


@dataclass
class _Card:
    heading: str
    vram_tag: str | None = None
    form_factors: list[str] = field(default_factory=list)
    cells: list[_Cell] = field(default_factory=list)
    unlabelled_prices: list[str] = field(default_factory=list)


def parse(content: bytes, observed_on: dt.date | None = None) -> ParseResult:
    sink = OfferSink(PROVIDER)
    text = page_text(content, sink.report, undecodable_note=UNDECODABLE_NOTE_SEMICOLON)
    soup = BeautifulSoup(text, "lxml")
    for title in drop_other_product_sections(soup):
        sink.note(SKIPPED_NOTE.format(title=title))
    # Tables and header-labelled grids are read (and removed) before the card reader.
    cards = _table_cards(soup) + _grid_cards(soup) + _cards(soup)
    if not any(card.cells for card in cards):
        what = "no GPU card with a labelled price (on-demand/spot/reserved)"
        unlabelled = sum(len(card.unlabelled_prices) for card in cards)
        raise StructureMissing(
            PROVIDER, what + (f"; {unlabelled} unlabelled prices seen" if unlabelled else "")
        )

    for card in cards:
        sink.report.rows_seen += 1
        # All of a card's offers are validated before any is kept: the report lists a card's
        # invalid prices before its duplicates.
        card_offers = _card_offers(card, sink)
        if card.cells and not card.unlabelled_prices and not any(_is_priced(c.text) for c in card.cells):
            sink.report.unpriced_rows += 1
        for offer in card_offers:
            sink.keep(offer, f"{offer.sku} | {offer.tier} | ${offer.usd_per_gpu_hour}")
    return sink.result()


# ---------------------------------------------------------------- page structure -> cards

_TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "name": (r"^(nvidia |amd )?(gpus?|gpu (model|type|name)|model|name|instance|instance type)$",),
    "vram": (r"\bvram\b|\bmemory\b|\bgpu mem",),
    "form_factor": (r"form factor|interconnect",),
}


def _table_cards(soup: BeautifulSoup) -> list[_Card]:
    """Rows of ``<table>``s that name a GPU column and price columns, as cards; the tables are
    then removed from the page so the card reader does not see their cells again.

    A price column is labelled by its header ("On-Demand (per GPU-hour)", "Spot"); a header
    naming no tier leaves its cells unlabelled (the first price of a row is on-demand). The 2025
    table heads its GPU column with the title "GPU Pricing" and writes the memory and form factor
    inside the name cell ("NVIDIA H200" "141GB" "SXM").
    """
    cards: list[_Card] = []
    for table in soup.find_all("table"):
        row_cells = [cells for cells in (tr.find_all(["th", "td"]) for tr in table.find_all("tr")) if cells]
        rows = [[clean_text(c.get_text(" ")) for c in cells] for cells in row_cells]
        if len(rows) < 2 or any(_is_priced(text) for text in rows[0]):
            continue
        header = rows[0]
        columns, _, _ = map_columns(header, _TABLE_COLUMNS)
        if (
            "name" not in columns
            and not _label_kind(header[0])
            and all(GPU_NAME.search(r[0]) for r in rows[1:])
        ):
            columns["name"] = 0  # a title cell over the GPU column ("GPU Pricing", the 2025 table)
        prices = [
            i
            for i, h in enumerate(header)
            if i not in columns.values() and (_label_kind(h) or re.search(r"price|\$|/\s*hr|hour", h, re.I))
        ]
        if "name" not in columns or not prices:
            continue
        for cells, tags in zip(rows[1:], row_cells[1:], strict=True):
            if len(cells) != len(header) or not cells[columns["name"]]:
                continue
            card = _name_cell_card(tags[columns["name"]])
            if "vram" in columns and _VRAM_TAG.match(cells[columns["vram"]]):
                card.vram_tag = cells[columns["vram"]]
            if "form_factor" in columns and _FORM_FACTOR_TAG.match(cells[columns["form_factor"]]):
                card.form_factors.append(cells[columns["form_factor"]])
            for i in prices:
                if not _is_value(cells[i]):
                    continue
                label = header[i] if _label_kind(header[i]) else None
                if label is None and not card.cells and i == prices[0]:
                    label = UNLABELLED_FIRST_PRICE
                if label is None:
                    card.unlabelled_prices.append(cells[i])
                else:
                    card.cells.append(_Cell(label=label, text=cells[i]))
            cards.append(card)
        table.decompose()
    return cards


def _name_cell_card(cell: Tag) -> _Card:
    """A card from a table's name cell: its first text is the GPU ("NVIDIA H200"), the texts after
    it its tags when they read as such ("141GB", "SXM": the 2025 table's name cells)."""
    texts = [clean_text(t) for t in cell.stripped_strings]
    card = _Card(heading=texts[0] if texts else clean_text(cell.get_text(" ")))
    for text in texts[1:]:
        if card.vram_tag is None and _VRAM_TAG.match(text):
            card.vram_tag = text
        elif _FORM_FACTOR_TAG.match(text):
            card.form_factors.append(text)
        else:
            card.heading = f"{card.heading} {text}"  # not a tag: part of the name
    return card


def _grid_cards(soup: BeautifulSoup) -> list[_Card]:
    """Cards of a Webflow collection under a header row ("GPU model | On-demand | Current spot"):
    each price cell is labelled by its column's header; the lists are then removed from the page.

    The live page's structure (a real capture: getcomputable/gpu-index
    tests/fixtures/observatory/crusoe/pricing.html @055204ad, 2026-08-22): the header labels sit in
    one row above the list, far from the cells, so the card reader alone would leave a spot price
    without its label.
    """
    cards: list[_Card] = []
    for listing, header_cells, rows in div_grid_cells(soup):
        header = [clean_text(cell_text(c)) for c in header_cells]
        columns, _, _ = map_columns(header, _TABLE_COLUMNS)
        tiers = [i for i, h in enumerate(header) if i not in columns.values() and _label_kind(h)]
        if "name" not in columns or not tiers:
            continue
        for cells in rows:
            card = _grid_card(cells[columns["name"]])
            if card is None:
                continue
            for i in tiers:
                text = cell_text(cells[i])
                if _is_value(text):
                    card.cells.append(_Cell(label=header[i], text=text))
            cards.append(card)
        listing.decompose()
    return cards


def _grid_card(name_cell: Tag) -> _Card | None:
    """A card from a grid's name cell: its heading, and its VRAM and form-factor tags."""
    heading = name_cell.find(_HEADING_TAGS)
    texts = [clean_text(t) for t in name_cell.find_all(string=True) if clean_text(t)]
    texts = [t for t in texts if t and not t.startswith("<")]
    name = clean_text(heading.get_text(" ")) if heading is not None else (texts[0] if texts else "")
    if not name:
        return None
    card = _Card(heading=name)
    for text in texts:
        if _VRAM_TAG.match(text):
            card.vram_tag = card.vram_tag or text
        elif _FORM_FACTOR_TAG.match(text) and text not in card.form_factors:
            card.form_factors.append(text)
    return card


def _is_priced(text: str) -> bool:
    return bool(DOLLAR_PRICE.search(text))


def _is_value(text: str) -> bool:
    return len(text) <= _MAX_CELL_CHARS and (_is_priced(text) or bool(_UNPRICED_MARKER.search(text)))


def _label_kind(text: str) -> Tier | None:
    if len(text) > 40:
        return None
    if _SPOT_LABEL.search(text):
        return "spot"
    if _RESERVED_LABEL.search(text) or term_months(text) is not None:
        return "reserved"
    if _ON_DEMAND_LABEL.search(text):
        return "on_demand"
    return None


@dataclass
class _Text:
    """An element found through one of its text strings; ``order`` is that string's position."""

    tag: Tag
    text: str
    order: int


def _cards(soup: BeautifulSoup) -> list[_Card]:
    strings, heading_candidates = _walk(soup)
    values, labels, specs = _scan_strings(strings)
    headings = _headings(heading_candidates)
    roots = _card_roots(headings)
    card_of_root = {id(roots[id(h)]): i for i, h in enumerate(headings)}
    heading_ids = {id(h) for h in headings}
    per_card: list[tuple[list[_Text], list[_Text], list[_Text]]] = [([], [], []) for _ in headings]
    for kind, items in enumerate((values, labels, specs)):
        for item in items:
            index = _card_index(item.tag, card_of_root, heading_ids)
            if index is not None:
                per_card[index][kind].append(item)
    cards: list[_Card] = []
    for heading, (card_values, card_labels, card_specs) in zip(headings, per_card):
        card = _read_card(roots[id(heading)], heading, card_values, card_labels, card_specs)
        if card.cells or card.unlabelled_prices:
            cards.append(card)
    return cards


def _walk(soup: BeautifulSoup) -> tuple[list[NavigableString], list[Tag]]:
    """One pass over the page: the visible text strings and the elements that may be headings.

    Scripts, styles and Webflow's hidden items are skipped with everything inside them;
    comments and the doctype are not text a visitor sees.
    """
    hidden: set[int] = set()
    strings: list[NavigableString] = []
    headings: list[Tag] = []
    for node in soup.descendants:
        if id(node.parent) in hidden:
            if isinstance(node, Tag):
                hidden.add(id(node))
            continue
        if isinstance(node, Tag):
            classes = node.get("class") or ()
            if node.name in _SKIPPED_TAGS or _HIDDEN_CLASS in classes:
                hidden.add(id(node))
            elif node.name in _HEADING_TAGS or any(_HEADING_CLASS.search(c) for c in classes):
                headings.append(node)
        elif type(node) is NavigableString:
            strings.append(node)
    return strings, headings


def _scan_strings(strings: list[NavigableString]) -> tuple[list[_Text], list[_Text], list[_Text]]:
    """Classify the page's text: price cells, labels and spec tags ("80GB", "HGX")."""
    values: dict[int, _Text] = {}
    labels: list[_Text] = []
    specs: list[_Text] = []
    for order, string in enumerate(strings):
        parent = string.parent
        text = clean_text(string)
        if parent is None or not text or len(text) > _MAX_CELL_CHARS:
            continue
        if _VRAM_TAG.match(text) or _FORM_FACTOR_TAG.match(text):
            specs.append(_Text(parent, text, order))
            continue
        if "$" in text or _UNPRICED_MARKER.search(text) or re.search(r"\busd\b", text, re.I):
            cell = _value_element(parent)
            if cell is not None and id(cell.tag) not in values:
                values[id(cell.tag)] = _Text(cell.tag, cell.text, order)
        if _label_kind(text):
            labels.append(_Text(parent, text, order))
    return list(values.values()), _merge_label_parts(labels, values), specs


def _value_element(tag: Tag) -> _Text | None:
    """The smallest element around a '$' whose text is a whole price ('$' and '3.90' may be split)."""
    for node in (tag, *list(tag.parents)[:2]):
        text = cell_text(node)
        if len(text) > _MAX_CELL_CHARS:
            return None
        if _OTHER_UNIT.search(text):
            return None  # storage or CPU prices, not GPU-hours
        if _is_value(text):
            return _Text(node, text, 0)
    return None


def _merge_label_parts(labels: list[_Text], values: dict[int, _Text]) -> list[_Text]:
    """Join label strings that are parts of one label: '<span>1-year</span> reserved'.

    Two consecutive labels merge when no price lies between them, one's element contains the
    other's or they share a parent, they name the same tier, and they do not both state a term
    (a header row "1-year reserved | 3-year reserved" stays two labels).
    """
    value_orders = sorted(v.order for v in values.values())
    merged: list[_Text] = []
    for label in labels:
        if merged:
            last = merged[-1]
            between = any(last.order < o < label.order for o in value_orders)
            related = (
                last.tag is label.tag
                or last.tag.parent is label.tag.parent
                or any(p is last.tag for p in label.tag.parents)
                or any(p is label.tag for p in last.tag.parents)
            )
            both_terms = term_months(last.text) is not None and term_months(label.text) is not None
            if (
                not between
                and related
                and _label_kind(last.text) == _label_kind(label.text)
                and not both_terms
            ):
                outer = label.tag if any(p is label.tag for p in last.tag.parents) else last.tag
                merged[-1] = _Text(outer, f"{last.text} {label.text}", last.order)
                continue
        merged.append(label)
    return merged


def _headings(candidates: list[Tag]) -> list[Tag]:
    """Elements that can name a card: h1-h6, or Webflow 'heading'/'title' divs, with a short name."""
    found: list[Tag] = []
    for tag in candidates:
        text = clean_text(tag.get_text(" "))
        if not text or len(text) > _MAX_CELL_CHARS or _is_value(text) or _label_kind(text):
            continue
        if _VRAM_TAG.match(text) or _FORM_FACTOR_TAG.match(text):
            continue
        found.append(tag)
    # A heading wrapping another heading counts once (the inner one).
    outer = {id(p) for h in found for p in h.parents}
    return [h for h in found if id(h) not in outer]


def _card_roots(headings: list[Tag]) -> dict[int, Tag]:
    """Each heading's card: its highest ancestor that contains no other heading."""
    headings_below: dict[int, int] = {}
    for heading in headings:
        for parent in heading.parents:
            headings_below[id(parent)] = headings_below.get(id(parent), 0) + 1
    roots: dict[int, Tag] = {}
    for heading in headings:
        root: Tag = heading
        for parent in heading.parents:
            if parent.name == "[document]" or headings_below[id(parent)] > 1:
                break
            root = parent
        roots[id(heading)] = root
    return roots


def _card_index(tag: Tag, card_of_root: dict[int, int], heading_ids: set[int]) -> int | None:
    for node in (tag, *tag.parents):
        if id(node) in heading_ids:
            return None  # text inside a heading names the card, it is not a cell
        if id(node) in card_of_root:
            return card_of_root[id(node)]
    return None


def _read_card(
    root: Tag, heading: Tag, values: list[_Text], labels: list[_Text], specs: list[_Text]
) -> _Card:
    card = _Card(heading=clean_text(heading.get_text(" ")))
    for spec in specs:
        if _VRAM_TAG.match(spec.text):
            card.vram_tag = card.vram_tag or spec.text
        elif spec.text not in card.form_factors:
            card.form_factors.append(spec.text)

    # Every element between a price cell and the card root, mapped to the cells below it.
    under: dict[int, list[_Text]] = {}
    for cell_value in values:
        for node in (cell_value.tag, *cell_value.tag.parents):
            under.setdefault(id(node), []).append(cell_value)
            if node is root:
                break
    value_by_tag = {id(v.tag): v for v in values}
    claimed: set[int] = set()
    for i, label in enumerate(labels):
        if id(label.tag) in value_by_tag:  # label and price in one text: "Spot: $1.60/GPU-hr"
            value: _Text | None = value_by_tag[id(label.tag)]
        elif id(label.tag) in under:  # "Spot: <b>$1.60</b>": the price inside the label's element
            value = next((v for v in under[id(label.tag)] if id(v.tag) not in claimed), None)
        else:
            # A label's price lies between the previous and the next label: a label whose own
            # cell is empty must not take its neighbour's price.
            window = (
                labels[i - 1].order if i > 0 else -1,
                labels[i + 1].order if i + 1 < len(labels) else 1 << 62,
            )
            value = _nearest_value(label, root, under, claimed, window)
        if value is not None and id(value.tag) not in claimed:
            claimed.add(id(value.tag))
            card.cells.append(_Cell(label=label.text, text=value.text))
    for value in values:
        if id(value.tag) in claimed:
            continue
        pane = _tab_pane_label(value.tag)
        if pane is not None:
            claimed.add(id(value.tag))
            card.cells.append(_Cell(label=pane, text=value.text))
    first = min(values, key=lambda v: v.order) if values else None
    if (
        first is not None
        and id(first.tag) not in claimed
        and _is_priced(first.text)
        and not any(_label_kind(c.label) == "on_demand" for c in card.cells)
        and (card.vram_tag is not None or GPU_NAME.search(card.heading))  # a GPU card, not a page section
    ):
        # Documented structure: the first price in a card is the on-demand one, label or not.
        claimed.add(id(first.tag))
        card.cells.insert(0, _Cell(label=UNLABELLED_FIRST_PRICE, text=first.text))
    card.unlabelled_prices = [v.text for v in values if id(v.tag) not in claimed and _is_priced(v.text)]
    return card


def _tab_pane_label(tag: Tag) -> str | None:
    """Webflow tabs ("On-demand | Spot") name their pane in ``data-w-tab``: the label of the prices inside."""
    for node in tag.parents:
        name = node.get("data-w-tab") if isinstance(node, Tag) else None
        if name:
            text = clean_text(name)
            return text if _label_kind(text) else None
    return None


def _nearest_value(
    label: _Text, root: Tag, under: dict[int, list[_Text]], claimed: set[int], window: tuple[int, int]
) -> _Text | None:
    """The unclaimed price cell in the smallest ancestor of the label that has one.

    When that ancestor holds several (a <dl>, a list of rows), take the first one after the label
    in document order, else the last one before it.
    """
    low, high = window
    for node in label.tag.parents:
        free = [v for v in under.get(id(node), []) if id(v.tag) not in claimed and low < v.order < high]
        if free:
            after = [v for v in free if v.order > label.order]
            return after[0] if after else free[-1]
        if node is root:
            return None
    return None


# ---------------------------------------------------------------- cards -> offers


def _gpu_raw(card: _Card) -> str:
    """The heading plus the tags that identify the part (VRAM, form factor), as the card shows them."""
    parts = [card.heading]
    lowered = card.heading.lower()
    for tag in [card.vram_tag, *card.form_factors]:
        if tag and tag.lower() not in lowered:
            parts.append(tag)
    return " ".join(parts)


def _card_offers(card: _Card, sink: OfferSink) -> list[Offer]:
    """The card's valid offers (not yet kept); bad prices and unlabelled ones are rejected."""
    gpu_raw = _gpu_raw(card)
    vram = parse_number(card.vram_tag) if card.vram_tag else None
    for price_text in card.unlabelled_prices:
        sink.reject(f"{gpu_raw} | {price_text}", "price without an on-demand/spot/reserved label")
    priced: list[tuple[_Cell, Price]] = []
    for cell in card.cells:
        try:
            price = parse_price(cell.text)
        except ValueError:
            sink.reject(f"{gpu_raw} | {cell.label} | {cell.text}", f"not a price: {cell.text!r}")
            continue
        if price is not None:
            priced.append((cell, price))
    if not priced:
        return []
    gpu = sink.gpu_slug(gpu_raw, vram)

    offers: list[Offer] = []
    for cell, price in priced:
        raw = f"{gpu_raw} | {cell.label} | {cell.text}"
        tier: Tier = _label_kind(cell.label) or "on_demand"  # cells only exist for labelled prices
        months = term_months(cell.label) if tier == "reserved" else None
        if tier == "reserved" and months is None:
            sink.reject(raw, "reserved price without a term in its label")
            continue
        if price.is_from:
            sink.report.notes.append(f"'from' price read as the price: {raw}")
        offer = sink.validate(
            raw,
            reason_prefix=f"invalid offer (${price.value}/GPU-hr): ",
            name_fields=False,  # the reason names the price already
            gpu=gpu,
            gpu_raw=gpu_raw,
            gpu_count=1,  # Crusoe prices per GPU-hour
            vram_gb=vram,
            tier=tier,
            commitment_months=months,
            usd_per_gpu_hour=float(price.value),
            usd_per_instance_hour=None,
            sku=gpu_raw,
            price_basis="from" if price.is_from else "list",
        )
        if offer is not None:
            offers.append(offer)
    return offers
