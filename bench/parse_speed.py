"""Figure 1: parsing the six providers' newest sample pages.

Three ways over the same bytes, run interleaved in one process:

* **product**: ``scrapers.registry.provider_parser(p).parse`` as shipped (BeautifulSoup + lxml);
* **bs4 + html.parser**: the same parsers with BeautifulSoup's tree builder swapped. Every provider
  module passes ``"lxml"`` to ``BeautifulSoup`` explicitly, so changing bs4's default features would
  change nothing; instead each module's ``BeautifulSoup`` name is replaced, for the duration of the
  run only, by a subclass that builds with ``"html.parser"`` (parse_only strainers still apply);
* **lxml alone**: ``lxml.html.fromstring`` plus a minimal XPath over the elements each parser reads
  (table rows and cells, the ``__NEXT_DATA__`` script, card headings and price texts, Runpod's price
  rows or its JSON). No offer validation or GPU-name mapping: the practical limit of the approach.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import bs4
import lxml.html
from pydantic import BaseModel, ConfigDict

from bench.figures import Bound, Figure, interleaved_medians, rate_figure
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE, archive_dates, find_archived_page, read_archived
from gpuprice.scrapers.offer import StructureMissing
from gpuprice.scrapers.registry import provider_parser

# The target: all six newest pages parsed in under 0.2 s.
SIX_PAGES_TARGET_S = 0.2


class SamplePage(BaseModel):
    model_config = ConfigDict(frozen=True)

    provider: str
    page_date: dt.date
    file_name: str
    content: bytes


def newest_pages(archive: Path = SAMPLE_ARCHIVE) -> list[SamplePage]:
    """Each provider's newest recorded page (the JSON API recording when a date has both)."""
    pages = []
    for provider, dates in archive_dates(archive).items():
        page = find_archived_page(archive, provider, dates[-1])
        assert page is not None  # the date came from the same folder listing
        pages.append(
            SamplePage(
                provider=provider,
                page_date=page.page_date,
                file_name=page.file_name,
                content=read_archived(page.path),
            )
        )
    if not pages:
        raise FileNotFoundError(f"no recorded pages under {archive}")
    return pages


def _parse_one(page: SamplePage) -> int | str:
    try:
        return len(provider_parser(page.provider).parse(page.content, observed_on=page.page_date).offers)
    except StructureMissing as exc:  # still timed: a page the parser rejects is work done too
        return f"structure missing: {exc.what}"


def parse_with_product(pages: list[SamplePage]) -> dict[str, int | str]:
    """Offers per provider (or the parser's StructureMissing), parsed as ``gpuprice run`` does."""
    return {page.provider: _parse_one(page) for page in pages}


class _HtmlParserSoup(bs4.BeautifulSoup):
    """BeautifulSoup that ignores the requested tree builder and uses Python's html.parser."""

    def __init__(self, markup: Any = "", features: Any = None, *args: Any, **kwargs: Any) -> None:
        kwargs.pop("builder", None)
        super().__init__(markup, "html.parser", *args, **kwargs)


@contextlib.contextmanager
def html_parser_everywhere(modules: list[ModuleType]) -> Iterator[None]:
    """Swap ``BeautifulSoup`` for the html.parser variant in the given modules, then restore it."""
    saved = {m: m.BeautifulSoup for m in modules if hasattr(m, "BeautifulSoup")}
    try:
        for module in saved:
            module.BeautifulSoup = _HtmlParserSoup
        yield
    finally:
        for module, original in saved.items():
            module.BeautifulSoup = original


def parse_with_html_parser(pages: list[SamplePage]) -> dict[str, int | str]:
    modules = [provider_parser(p.provider) for p in pages]
    with html_parser_everywhere(modules):
        return parse_with_product(pages)


# ---- lxml alone: the elements each parser reads, nothing else -----------------------------------
def _table_cells(root: Any) -> int:
    rows = [[c.text_content().strip() for c in tr.xpath("./th|./td")] for tr in root.xpath("//table//tr")]
    return sum(len(r) for r in rows)


def _next_data(root: Any) -> int:
    scripts = root.xpath("//script[@id='__NEXT_DATA__']/text()")
    return len(json.loads(scripts[0])) if scripts else 0


def _cards(root: Any) -> int:
    headings = [h.text_content().strip() for h in root.xpath("//h1|//h2|//h3|//h4|//h5|//h6")]
    prices = root.xpath("//text()[contains(., '$')]/..")
    return len(headings) + len(prices)


def _price_rows(root: Any) -> int:
    rows = root.xpath("//*[contains(concat(' ', normalize-space(@class), ' '), ' gpu-pricing-row ')]")
    return sum(len(r.attrib) for r in rows)


_LXML_EXTRACTORS: dict[str, Callable[[Any], int]] = {
    "runpod": _price_rows,  # when the recording is HTML; the JSON API is read with json.loads
    "lambda": _table_cells,
    "coreweave": _table_cells,
    "nebius": _next_data,
    "crusoe": _cards,
    "massedcompute": _table_cells,
}


def _is_json(content: bytes) -> bool:
    return content.lstrip()[:1] in (b"{", b"[")


def extract_with_lxml_only(pages: list[SamplePage]) -> dict[str, int]:
    """Items pulled per provider (cells, JSON keys, ...): proof the XPath found the structure."""
    found = {}
    for page in pages:
        if _is_json(page.content):
            found[page.provider] = len(json.loads(page.content))
            continue
        root = lxml.html.fromstring(page.content)
        found[page.provider] = _LXML_EXTRACTORS.get(page.provider, _table_cells)(root)
    return found


def measure(repeats: int = 15, archive: Path = SAMPLE_ARCHIVE) -> list[Figure]:
    pages = newest_pages(archive)
    n_pages = len(pages)
    megabytes = sum(len(p.content) for p in pages) / 1e6
    # Warm-up: imports, regex compilation and the GPU catalog load are not parse speed.
    offers_lxml = parse_with_product(pages)
    offers_html = parse_with_html_parser(pages)
    extracted = extract_with_lxml_only(pages)
    medians = interleaved_medians(
        {
            "product": lambda: parse_with_product(pages),
            "html_parser": lambda: parse_with_html_parser(pages),
            "lxml_only": lambda: extract_with_lxml_only(pages),
        },
        repeats,
    )
    product, html_parser, lxml_only = medians["product"], medians["html_parser"], medians["lxml_only"]
    common = {
        "pages": {p.provider: p.file_name for p in pages},
        "megabytes": round(megabytes, 4),
        "repeats": repeats,
        "product_mb_per_s": round(megabytes / product, 3),
    }
    return [
        Figure(
            name="parse.six_pages_seconds",
            value=product,
            unit="s",
            baseline="lxml alone + minimal XPath",
            baseline_value=lxml_only,
            ratio_meaning="times slower than the practical limit",
            target=(Bound(on="value", op="<=", limit=SIX_PAGES_TARGET_S),),
            details={**common, "offers": offers_lxml, "lxml_only_items": extracted},
        ),
        rate_figure(
            "parse.pages_per_s_vs_html_parser",
            n_pages,
            "pages/s",
            seconds=product,
            baseline="bs4 + html.parser",
            baseline_seconds=html_parser,
            ratio_meaning="speed-up of lxml over html.parser",
            # The product chose lxml for speed: it should not be slower than the alternative.
            target=(Bound(on="ratio", op=">=", limit=1.0),),
            details={
                **common,
                "html_parser_mb_per_s": round(megabytes / html_parser, 3),
                "html_parser_offers": offers_html,
                "same_offer_counts": offers_html == offers_lxml,
            },
        ),
        rate_figure(
            "parse.pages_per_s_vs_lxml_only",
            n_pages,
            "pages/s",
            seconds=product,
            baseline="lxml alone + minimal XPath",
            baseline_seconds=lxml_only,
            ratio_meaning="share of the practical limit",
            details={**common, "lxml_only_mb_per_s": round(megabytes / lxml_only, 3)},
        ),
    ]
