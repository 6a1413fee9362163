"""The generic fallback extractor: GPU prices read from a page's text when its structure is gone.

:func:`parse_with_fallback` runs a provider's structured reader first; only when that finds no
price structure (``StructureMissing``) does it read the page as text:

1. *Lines*: the visible text, one line per block element and one per table row (cells joined
   with " | "); when those give no offer, the strings embedded in scripts (``__NEXT_DATA__``,
   App Router flight data, JSON bodies), where a list of strings is a row and HTML inside a
   string is read as HTML.
2. *GPU context*: a line naming a GPU ("NVIDIA H100 SXM", "8x H200") opens a context that the
   prices after it belong to, until the next GPU name; tag lines right after it ("80GB",
   "HGX") join the name. The count comes from "8x", "8 ×", "x8" or "8 GPUs".
3. *Prices*: "$x" with a unit: "/GPU-hr" (per GPU-hour), "/hr" (per instance-hour when the
   line gives a GPU count and the provider prices instances, else the provider's documented
   unit), no unit (the provider's unit). Prices in other units (storage per GiB-month, CPU per
   vCPU-hour) are skipped. A header row's cells label the price columns below it.
4. *Tiers*: a label on the price's line, column header or the label line next to it
   ("On-demand", "Spot", "Preemptible", "Reserved (1 year)"). An unlabelled price is on-demand
   only for the first price of a context, and only when the provider's documented structure
   says so (``UNLABELED_TIER``); otherwise it is rejected, never guessed. A reserved price
   needs its term.

Offers are built through the same :class:`OfferSink` as the structured readers (same
validation, duplicates counted once) and are marked ``parse_strategy = "fallback"``; the
pipeline's blocking checks run on them unchanged. Prices found before any GPU name are
quarantined (rejected with their raw text), never offers. No price at all: the structured
reader's ``StructureMissing`` stands, with the quarantined rows on its ``report``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from bs4 import BeautifulSoup

from gpuprice.scrapers.fallback_lines import json_lines, script_lines, visible_lines
from gpuprice.scrapers.fallback_reader import LineReader
from gpuprice.scrapers.identity import confirm
from gpuprice.scrapers.offer import ParseResult, Provider, StructureMissing, Tier
from gpuprice.scrapers.offer_sink import OfferSink
from gpuprice.scrapers.page_input import page_text
from gpuprice.scrapers.page_sections import SKIPPED_NOTE, drop_other_product_sections

if TYPE_CHECKING:
    from gpuprice.scrapers.registry import ProviderParser

FALLBACK_NOTE = "structured reader found no price structure ({what}); prices read by the fallback extractor"


def read_structured(
    parser: ProviderParser, content: bytes, observed_on: dt.date | None = None
) -> ParseResult | StructureMissing:
    """The structured reader's result, or why it found no price structure (not yet confirmed as
    the provider's page: :func:`parse_with_fallback` does that)."""
    try:
        return parser.parse(content, observed_on=observed_on)
    except StructureMissing as missing:
        return missing


def parse_with_fallback(
    parser: ProviderParser,
    content: bytes,
    observed_on: dt.date | None = None,
    structured: ParseResult | StructureMissing | None = None,
) -> ParseResult:
    """The structured reader's result, else the fallback extractor's (see the module docstring).

    Whatever either reader finds is kept only when the page is the provider's
    (``scrapers/identity.py``): otherwise ``NotProvidersPage`` is raised and no offer survives. A
    page where neither finds a price keeps the reader's reason (a login page, a captcha).
    ``structured``: the structured reader's outcome when the caller already has it
    (:func:`read_structured`), so the page is not read twice.
    """
    outcome = read_structured(parser, content, observed_on) if structured is None else structured
    if not isinstance(outcome, StructureMissing):
        confirm_page(parser, content)
        return outcome
    structured = outcome
    provider = _provider(parser.PROVIDER)
    decoding = OfferSink(provider).report  # notes about the bytes (undecodable, ...)
    try:
        text = page_text(content, decoding)
    except StructureMissing:
        raise structured from None
    sink = extract_offers(
        text,
        provider,
        unlabeled_tier=parser.UNLABELED_TIER,
        instance_priced=parser.PRICE_UNIT == "instance_hour",
    )
    result = sink.result()
    result.report.parse_strategy = "fallback"
    if not result.offers:
        raise StructureMissing(structured.provider, structured.what, report=result.report) from None
    confirm_page(parser, content)
    result.report.notes[:0] = [FALLBACK_NOTE.format(what=structured.what), *decoding.notes]
    return result


def confirm_page(parser: ProviderParser, content: bytes) -> dict[str, int]:
    """The evidence that ``content`` is the page of ``parser``'s provider (``NotProvidersPage`` if not).

    Only asked of a page a reader found prices on (an empty or undecodable page never gets here).
    """
    from gpuprice.scrapers.registry import IDENTITIES

    try:
        text = page_text(content, OfferSink(parser.PROVIDER).report)
    except StructureMissing:
        return {}
    return confirm(parser.PROVIDER, text, IDENTITIES)


def _provider(name: str) -> Provider:
    return name  # type: ignore[return-value]  # registered parsers name a valid provider


def extract_offers(
    text: str, provider: Provider, *, unlabeled_tier: Tier | None, instance_priced: bool
) -> OfferSink:
    """The offers read from ``text`` (HTML or JSON): the visible lines' when they give any, else
    the script strings'; with no offer anywhere, the pass that quarantined the most prices."""
    stripped = text.lstrip()
    sources: list[Callable[[], Iterable[str]]]
    skipped: list[str] = []
    if stripped[:1] in ("{", "["):
        sources = [lambda: json_lines(stripped)]
    else:
        soup = BeautifulSoup(text, "lxml")
        skipped = drop_other_product_sections(soup)
        scripts = [s.get_text() for s in soup.find_all("script")]
        sources = [lambda: visible_lines(soup), lambda: script_lines(scripts)]
    best: OfferSink | None = None
    for source in sources:
        sink = OfferSink(provider)
        for title in skipped:
            sink.note(SKIPPED_NOTE.format(title=title))
        reader = LineReader(sink, unlabeled_tier=unlabeled_tier, instance_priced=instance_priced)
        for line in source():
            reader.read(line)
        reader.finish()
        if sink.offers:
            return sink
        if best is None or len(sink.report.rejected) > len(best.report.rejected):
            best = sink
    assert best is not None
    return best
