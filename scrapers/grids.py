"""Tables that are not ``<table>``s: the div grids site builders render price tables as.

Webflow (CoreWeave, Crusoe) renders a CMS collection as a list (``role="list"``, items
``role="listitem"``) under a header row of divs, with no ``<table>`` and no ARIA table roles:

    <div class="table-header"><div class="cell">GPU Model</div><div class="cell">GPU Count</div>...</div>
    <div role="list"><div role="listitem"><div class="grid"><div class="cell">NVIDIA HGX H100</div>...

:func:`div_grids` reads each such list as rows of cell texts under the header row that precedes
it, without depending on class names: the header is the nearest element before the list whose
children are short text labels; in each item the row is the first element with as many cells as
the header, its cells being the children that share a class with the header's cells (so a
mobile-only duplicate block inside the row is left out) or, when the header's cells share no
class with them, all its element children.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bs4 import BeautifulSoup, Tag

from gpuprice.scrapers.parsing import cell_text

# A grid: rows of (cell texts, is the header row), the header first.
Grid = list[tuple[list[str], bool]]

_MIN_COLUMNS = 2
_MAX_HEADER_CHARS = 80
_PRICE = re.compile(r"\$\s*\d")
_UP_LEVELS = 4  # how far above the list its header row may sit


def div_grids(soup: BeautifulSoup | Tag) -> Iterator[tuple[Tag, Grid]]:
    """Each list (``role="list"``) that sits under a header row of divs: (the list, its grid)."""
    for listing, header_cells, rows in div_grid_cells(soup):
        yield (
            listing,
            [
                ([cell_text(c) for c in header_cells], True),
                *(([cell_text(c) for c in cells], False) for cells in rows),
            ],
        )


def div_grid_cells(soup: BeautifulSoup | Tag) -> Iterator[tuple[Tag, list[Tag], list[list[Tag]]]]:
    """(the list, its header cells, each item's cells) of every list under a header row of divs."""
    for listing in soup.find_all(role="list"):
        items = [c for c in listing.find_all(True, recursive=False) if isinstance(c, Tag)]
        if not items:
            continue
        header = _header_row(listing)
        if header is None:
            continue
        header_cells = _element_children(header)
        header_classes = _shared_classes(header_cells)
        rows = [cells for item in items if (cells := _row_cells(item, len(header_cells), header_classes))]
        if rows:
            yield listing, header_cells, rows


def _element_children(tag: Tag) -> list[Tag]:
    return [c for c in tag.children if isinstance(c, Tag) and c.name not in ("script", "style", "template")]


def _is_header_row(tag: Tag) -> bool:
    cells = _element_children(tag)
    if len(cells) < _MIN_COLUMNS:
        return False
    texts = [cell_text(c) for c in cells]
    return (
        all(texts)
        and all(len(t) <= _MAX_HEADER_CHARS and not _PRICE.search(t) for t in texts)
        and len(set(texts)) == len(texts)
    )


def _header_row(listing: Tag) -> Tag | None:
    """The nearest header row before ``listing``: in its preceding siblings, then its ancestors'."""
    node: Tag | None = listing
    for _ in range(_UP_LEVELS):
        if node is None:
            return None
        for sibling in node.find_previous_siblings(True):
            found = _last_header_in(sibling)
            if found is not None:
                return found
        node = node.parent if isinstance(node.parent, Tag) else None
    return None


def _last_header_in(tag: Tag) -> Tag | None:
    """The deepest, last header row inside ``tag`` (or ``tag`` itself)."""
    for candidate in reversed([tag, *tag.find_all(True)]):
        if _is_header_row(candidate) and not any(_is_header_row(c) for c in _element_children(candidate)):
            return candidate
    return None


def _classes(tag: Tag) -> set[str]:
    value: object = tag.get("class") or []
    return {str(v) for v in value} if isinstance(value, list) else set(str(value).split())


def _shared_classes(cells: list[Tag]) -> set[str]:
    shared = _classes(cells[0]) if cells else set()
    for cell in cells[1:]:
        shared &= _classes(cell)
    return shared


def _row_cells(item: Tag, columns: int, header_classes: set[str]) -> list[Tag] | None:
    """The cells of one list item: the first element (breadth first) with ``columns`` cells."""
    queue = [item]
    while queue:
        node = queue.pop(0)
        children = _element_children(node)
        if header_classes:
            matching = [c for c in children if _classes(c) & header_classes]
            if len(matching) == columns:
                return matching
        if len(children) == columns and not header_classes:
            return children
        queue.extend(children)
    if header_classes:  # the header's cells share a class the rows do not use: count children
        queue = [item]
        while queue:
            node = queue.pop(0)
            children = _element_children(node)
            if len(children) == columns:
                return children
            queue.extend(children)
    return None


_ROW_CLASS = re.compile(r"(?:^|[_-])(?:row|tr)$", re.I)
_CELL_CLASS = re.compile(r"(?:^|[_-])(?:cell|col|column|td|th)$", re.I)
# A table split in sections (``x__head`` > header row, then ``x__body`` > data rows), as Nebius's
# server-rendered page writes its tables.
_HEAD_CLASS = re.compile(r"(?:^|[_-])(?:head|thead)$", re.I)
_BODY_CLASS = re.compile(r"(?:^|[_-])(?:body|tbody)$", re.I)


def class_named_grids(soup: BeautifulSoup | Tag) -> Iterator[tuple[Tag, Grid]]:
    """Div tables whose rows and cells are named by class (``x__row`` > ``x__cell``): the
    parent of two or more such rows, as a grid whose first row is the header. When the rows sit in
    a body section (``x__body``), the header row is the one in the head section before it
    (``x__head``), never the body's first data row."""
    seen: set[int] = set()
    for row in soup.find_all(class_=_ROW_CLASS):
        parent = row.parent
        if not isinstance(parent, Tag) or id(parent) in seen or parent.name == "table":
            continue
        seen.add(id(parent))
        if _has_class(parent, _HEAD_CLASS) and _body_after(parent) is not None:
            continue  # read with its body section
        rows = [*_head_rows(parent), *_class_named_rows(parent)]
        grid: Grid = []
        for index, tag in enumerate(rows):
            cells = [c for c in _element_children(tag) if _has_class(c, _CELL_CLASS)]
            if cells:
                grid.append(([cell_text(c) for c in cells], index == 0))
        if len(grid) >= 2 and grid[0][1] and _is_header_texts(grid[0][0]):
            yield parent, grid


def _has_class(tag: Tag, pattern: re.Pattern[str]) -> bool:
    return any(pattern.search(k) for k in _classes(tag))


def _class_named_rows(parent: Tag) -> list[Tag]:
    return [c for c in _element_children(parent) if _has_class(c, _ROW_CLASS)]


def _body_after(head: Tag) -> Tag | None:
    following = head.find_next_sibling(True)
    return following if isinstance(following, Tag) and _has_class(following, _BODY_CLASS) else None


def _head_rows(body: Tag) -> list[Tag]:
    """The rows of the head section just before a body section; none for any other parent."""
    if not _has_class(body, _BODY_CLASS):
        return []
    head = body.find_previous_sibling(True)
    return _class_named_rows(head) if isinstance(head, Tag) and _has_class(head, _HEAD_CLASS) else []


def headless_class_named_grids(soup: BeautifulSoup | Tag) -> Iterator[tuple[Tag, Grid]]:
    """Div tables named by class whose body section (``x__body``, ``table-body``) has no head section
    before it, as a capture cut inside the header row leaves them (henryzhangpku/gpu-price-index
    tests/fixtures/backfill/coreweave_20230921194906.html, cut at the header's last cell "GPU
    Component Cost Per Hour"). The grid's header is the class-named row just before the body when
    it has as many cells as the body's rows; else the label just before the body (short text, no
    price), set over the one column whose cells hold prices, the other headers left empty."""
    for body in soup.find_all(class_=_BODY_CLASS):
        if not isinstance(body, Tag) or _head_rows(body):
            continue  # a table with its head section: class_named_grids reads it
        data = [
            [cell_text(c) for c in _element_children(row) if _has_class(c, _CELL_CLASS)]
            for row in _class_named_rows(body)
        ]
        widths = {len(texts) for texts in data if texts}
        if len(data) < 2 or not widths or max(widths) < _MIN_COLUMNS:
            continue
        columns = max(widths)
        data = [texts for texts in data if len(texts) == columns]  # a row the cut left incomplete is no row
        header = _header_before(body, columns, data)
        if header is not None and len(data) >= 2:
            yield body, [(header, True), *((texts, False) for texts in data)]


def _header_before(body: Tag, columns: int, data: list[list[str]]) -> list[str] | None:
    before = body.find_previous_sibling(True)
    if not isinstance(before, Tag):
        return None
    for tag in reversed([before, *before.find_all(True)]):
        if _has_class(tag, _ROW_CLASS):
            cells = [cell_text(c) for c in _element_children(tag) if _has_class(c, _CELL_CLASS)]
            if len(cells) == columns and _is_header_texts(cells):
                return cells
    label = cell_text(before)
    priced = [i for i in range(columns) if any(_PRICE.search(texts[i]) for texts in data)]
    if not label or len(label) > _MAX_HEADER_CHARS or _PRICE.search(label) or len(priced) != 1:
        return None
    return [label if i == priced[0] else "" for i in range(columns)]


def _is_header_texts(texts: list[str]) -> bool:
    return len(texts) >= _MIN_COLUMNS and all(
        len(t) <= _MAX_HEADER_CHARS and not _PRICE.search(t) for t in texts
    )
