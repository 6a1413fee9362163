"""Page -> lines, for the fallback extractor (``scrapers/fallback.py``).

The visible text is one line per block element and one per table row (cells joined with
:data:`CELL_SEP`); a heading's line starts with :data:`HEADING_MARK`. The strings embedded in
scripts (``__NEXT_DATA__``, App Router flight data, JSON bodies) are lines too: a list of strings
is a row, HTML inside a string is read as HTML, a price under a key is labelled by the key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from bs4 import BeautifulSoup, NavigableString

from gpuprice.bounded_load import load_json
from gpuprice.scrapers.next_data import flight_payload, flight_rows, is_rsc_reference
from gpuprice.scrapers.parsing import clean_text

CELL_SEP = " | "
_BLOCK_TAGS = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "br",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "section",
        "summary",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "ul",
        "button",
        "a",
        "label",
    ]
)
_HEADINGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
HEADING_MARK = "\x01"  # starts a heading's line: a heading without a GPU name ends the GPU context
_SKIPPED_TAGS = ("script", "style", "noscript", "template", "svg", "head", "iframe")


def visible_lines(soup: BeautifulSoup) -> list[str]:
    for skipped in soup.find_all(_SKIPPED_TAGS):
        skipped.decompose()
    for row in soup.find_all("tr"):
        cells = [clean_text(c.get_text(" ")) for c in row.find_all(["td", "th"])]
        row.replace_with(NavigableString("\n" + CELL_SEP.join(cells) + "\n"))
    for tag in soup.find_all(_BLOCK_TAGS):
        tag.insert_before("\n" + (HEADING_MARK if tag.name in _HEADINGS else ""))
        tag.insert_after("\n")
    return _lines(soup.get_text())


def _lines(text: str) -> list[str]:
    return [line for line in (clean_text(part) for part in text.split("\n")) if line]


def script_lines(scripts: list[str]) -> Iterator[str]:
    payload = flight_payload(scripts)
    if payload:
        for row in flight_rows(payload):
            yield from _node_lines(row)
        if "<" in payload:  # escaped HTML streamed in the chunks
            yield from _html_lines(payload)
    for code in scripts:
        if "__next_f" in code:
            continue
        stripped = code.strip()
        try:
            yield from _node_lines(json.loads(stripped))
            continue
        except json.JSONDecodeError:
            pass
        for literal in re.finditer(r'"(?:[^"\\]|\\.)*"', code):  # string literals in plain JS
            try:
                value = load_json(literal.group(0))
            except ValueError:  # malformed, or deeper/larger than the bounded reader takes
                continue
            yield from _node_lines(value)


def json_lines(text: str) -> Iterator[str]:
    try:
        data = load_json(text)
    except ValueError:  # malformed, or deeper/larger than the bounded reader takes
        return
    yield from _node_lines(data)


def _html_lines(fragment: str) -> list[str]:
    return visible_lines(BeautifulSoup(fragment, "lxml"))


def _node_lines(node: Any) -> Iterator[str]:
    """Lines of a decoded JSON / RSC node: a list of scalars is a row, an RSC ``tr`` element too."""
    if isinstance(node, str):
        if is_rsc_reference(node):
            return
        if "<" in node and ">" in node:
            yield from _html_lines(node)
        else:
            yield from _lines(node)
    elif isinstance(node, list):
        if len(node) >= 4 and node[0] == "$" and isinstance(node[1], str):  # an RSC element
            props = node[3] if isinstance(node[3], dict) else {}
            if node[1] == "tr":
                cells = [" ".join(_node_lines(cell)) for cell in _rsc_children(props.get("children"))]
                yield CELL_SEP.join(cells)
            else:
                yield from _node_lines(props.get("children"))
        elif len(node) >= 2 and all(
            isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in node
        ):
            yield CELL_SEP.join(clean_text(v) for v in node)
        else:
            for item in node:
                yield from _node_lines(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str) and "$" in value and not is_rsc_reference(value):
                # {"onDemand": "$3.90/GPU-hr"}: the key labels the price ("on Demand: $3.90/GPU-hr")
                yield f"{_words(str(key))}: {clean_text(value)}"
            else:
                yield from _node_lines(value)


def _words(key: str) -> str:
    """'onDemandPrice' -> 'on Demand Price', 'spot_price' -> 'spot price'."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])|_", " ", key)


def _rsc_children(children: Any) -> list[Any]:
    if isinstance(children, list) and children and children[0] != "$":
        return children
    return [children]
