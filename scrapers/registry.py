"""Provider name -> parser module. Every module exposes:

- ``PROVIDER``: the provider name; ``PARSER_VERSION``: bumped whenever parsing output changes;
- ``PRICING_URL``: the human pricing page (linked from reports);
- ``live_requests() -> list[PageRequest]``: what ``--source live`` fetches;
- ``parse(content: bytes, observed_on: date | None = None) -> ParseResult``: raises
  ``StructureMissing`` when the page has no recognisable price structure.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from gpuprice.scrapers.offer import PROVIDERS

_MODULES = {
    "runpod": "gpuprice.scrapers.providers.runpod",
    "lambda": "gpuprice.scrapers.providers.lambda_cloud",
    "coreweave": "gpuprice.scrapers.providers.coreweave",
    "nebius": "gpuprice.scrapers.providers.nebius",
    "crusoe": "gpuprice.scrapers.providers.crusoe",
    "massedcompute": "gpuprice.scrapers.providers.massedcompute",
}
assert set(_MODULES) == set(PROVIDERS)


def provider_module(provider: str) -> ModuleType:
    """The parser module of a provider (ValueError naming the valid ones when unknown)."""
    if provider not in _MODULES:
        raise ValueError(f"unknown provider {provider!r}; valid: {', '.join(PROVIDERS)}")
    return importlib.import_module(_MODULES[provider])
