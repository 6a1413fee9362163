"""Sections of a pricing page that price another product than GPU instances.

Providers price managed inference, fine-tuning, storage and Kubernetes on the same page as their
GPU instances, often in the same card grid: Crusoe's 2026 page has "Self-Serve Deployments
pricing" (dedicated inference endpoints per GPU-hour, columns "GPU type | Price per hour") below
"GPU instances pricing" (a real capture: ewyluda/gpu-price-index tests/fixtures/crusoe.html
@078a7891). An endpoint's price per GPU-hour is not an instance's, so such a section is removed
before a reader (structured or the fallback) sees the page, and the report names it.
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup

from gpuprice.scrapers.parsing import DOLLAR_PRICE, clean_text

# A heading for another product. One that also names compute, GPUs, instances or clusters
# ("Pricing for compute, inference, and fine-tuning") is not one: it heads instance prices too.
_OTHER_PRODUCT = re.compile(
    r"\b(deployments?|inference|endpoints?|fine[\s-]?tun\w*|throughput|serverless|tokens?|storage|kubernetes)\b",
    re.I,
)
_INSTANCES = re.compile(r"\b(gpus?|compute|instances?|clusters?)\b", re.I)
_SECTION_TAGS = ("h1", "h2", "h3")
_WHOLE_PAGE = ("body", "html", "[document]")

SKIPPED_NOTE = "section '{title}' skipped: not GPU-instance prices"


def drop_other_product_sections(soup: BeautifulSoup) -> list[str]:
    """Remove each section whose heading names another product; return their titles.

    The section is the smallest element around the heading that holds a dollar price, and only
    when it holds no other heading of the same level: prices that cannot be told apart from
    another section's stay (nothing is dropped by guess), and so does the whole page."""
    dropped: list[str] = []
    for heading in soup.find_all(_SECTION_TAGS):
        if heading.parent is None:
            continue  # inside a section removed already
        title = clean_text(heading.get_text(" "))
        if not _OTHER_PRODUCT.search(title) or _INSTANCES.search(title):
            continue
        section = next((a for a in heading.parents if DOLLAR_PRICE.search(a.get_text(" "))), None)
        if section is None or section.name in _WHOLE_PAGE:
            continue
        if any(other is not heading for other in section.find_all(heading.name)):
            continue
        section.decompose()
        dropped.append(title)
    return dropped
