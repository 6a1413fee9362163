"""Provider pricing pages: the only external links a report carries (plain <a href>)."""

from __future__ import annotations

import functools
from urllib.parse import urlparse

from gpuprice.scrapers.offer import PROVIDERS


def _is_web_url(url: object) -> bool:
    if not isinstance(url, str):
        return False
    parsed = urlparse(url)
    return parsed.scheme in ("http", "https") and bool(parsed.netloc)


@functools.cache
def pricing_url(provider: str) -> str | None:
    """The registered provider's PRICING_URL; None for anything not a known provider."""
    if provider not in PROVIDERS:
        return None
    from gpuprice.scrapers.registry import provider_parser

    url = provider_parser(provider).PRICING_URL
    return url if _is_web_url(url) else None
