"""Provider pricing pages: the only external links a report carries (plain <a href>)."""

from __future__ import annotations

import functools
from urllib.parse import urlparse

from gpuprice.scrapers.offer import PROVIDERS

# Fallback while a provider module is missing; source: shared/reference/provider-pages.md.
_FALLBACK_URLS: dict[str, str] = {
    "runpod": "https://www.runpod.io/pricing",
    "lambda": "https://lambda.ai/pricing",
    "coreweave": "https://www.coreweave.com/pricing",
    "nebius": "https://nebius.com/prices",
    "crusoe": "https://crusoe.ai/cloud/pricing",
    "massedcompute": "https://vm.massedcompute.com/pricing",
}


def _is_web_url(url: object) -> bool:
    if not isinstance(url, str):
        return False
    parsed = urlparse(url)
    return parsed.scheme in ("http", "https") and bool(parsed.netloc)


@functools.cache
def pricing_url(provider: str) -> str | None:
    """The provider module's PRICING_URL (or the fallback); None for anything not a known provider."""
    if provider not in PROVIDERS:
        return None
    from gpuprice.scrapers.registry import provider_module

    url = getattr(provider_module(provider), "PRICING_URL", None)
    if not _is_web_url(url):
        url = _FALLBACK_URLS.get(provider)
    return url if _is_web_url(url) else None
