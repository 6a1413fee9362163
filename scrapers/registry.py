"""The provider parsers, each implementing :class:`ProviderParser`, registered by name.

A provider is a module (or any object) with these members; mypy checks every registered one
against the protocol here, and ``tests/test_provider_registry.py`` checks them at run time:

- ``PROVIDER``: the provider name (one of ``offer.PROVIDERS``);
- ``PARSER_VERSION``: ``"<provider>/<n>"``, bumped whenever parsing output changes;
- ``PRICING_URL``: the human pricing page (linked from reports);
- ``UNLABELED_TIER``: the tier of a price the page shows without a tier label, when the
  provider's documented structure says so (Crusoe: the first price in a card is on-demand),
  else None; the fallback extractor never guesses beyond it;
- ``PRICE_UNIT``: what a bare "$x/hr" on the page prices: ``"gpu_hour"`` or ``"instance_hour"``;
- ``IDENTITY``: what shows a page is the provider's (``scrapers/identity.py``: its domains, brand
  names, and the structure only its pages or API responses have); every page is confirmed
  against it before either reader takes a price from it;
- ``live_requests() -> list[PageRequest]``: what ``--source live`` and ``check-live`` fetch;
- ``parse(content, observed_on=None) -> ParseResult``: the structured reader; raises
  ``StructureMissing`` when the page has no recognisable price structure;
- optionally ``next_page_request(request, body) -> PageRequest | None`` and ``MAX_PAGES`` for a
  paged API whose requests are ``combine`` parts (Azure, OCI; ``scrapers/multipage.py``);
- optionally ``PARSE_READS_DATE = True`` when the result depends on ``observed_on`` as well as
  on the bytes (Nebius dates "Effective October 1" by it): a backfill then parses such a page
  once per date instead of once per content.

To add a provider: write the module under ``scrapers/providers/``, add its name to
``offer.PROVIDERS`` (and the ``Provider`` literal), and list it in ``_REGISTERED`` below.
Callers parse through :func:`parse_page`, which falls back to the generic extractor
(``scrapers/fallback.py``) when the structured reader finds nothing.
"""

from __future__ import annotations

import datetime as dt
from typing import Protocol, runtime_checkable

from gpuprice.errors import unknown_choice
from gpuprice.scrapers.identity import Identity
from gpuprice.scrapers.offer import PROVIDERS, ParseResult, PriceUnit, StructureMissing, Tier
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.providers import (
    aws,
    azure,
    coreweave,
    crusoe,
    lambda_cloud,
    massedcompute,
    nebius,
    oci,
    runpod,
    vastai,
)


@runtime_checkable
class ProviderParser(Protocol):
    """What every provider implements (see the module docstring)."""

    PROVIDER: str
    PARSER_VERSION: str
    PRICING_URL: str
    UNLABELED_TIER: Tier | None
    PRICE_UNIT: PriceUnit
    IDENTITY: Identity

    def live_requests(self) -> list[PageRequest]: ...

    def parse(self, content: bytes, observed_on: dt.date | None = None) -> ParseResult: ...


_REGISTERED: tuple[ProviderParser, ...] = (
    runpod,
    lambda_cloud,
    coreweave,
    nebius,
    crusoe,
    massedcompute,
    azure,
    aws,
    oci,
    vastai,
)
PARSERS: dict[str, ProviderParser] = {parser.PROVIDER: parser for parser in _REGISTERED}
assert tuple(PARSERS) == PROVIDERS, (tuple(PARSERS), PROVIDERS)
# Every provider's identity: a page is confirmed as its provider's against all of them.
IDENTITIES: dict[str, Identity] = {name: parser.IDENTITY for name, parser in PARSERS.items()}
assert all(identity.provider == name for name, identity in IDENTITIES.items())


def provider_parser(provider: str) -> ProviderParser:
    """The parser of a provider; BadInput (a ValueError) naming the valid ones when unknown."""
    try:
        return PARSERS[provider]
    except KeyError:
        raise unknown_choice("provider", provider, PROVIDERS) from None


def parse_page(
    provider: str,
    content: bytes,
    observed_on: dt.date | None = None,
    *,
    structured: ParseResult | StructureMissing | None = None,
) -> ParseResult:
    """The provider's offers from one page: its structured reader, else the fallback extractor.

    The page is first confirmed as the provider's (``scrapers/identity.py``): another provider's
    page or an unrelated one raises ``NotProvidersPage`` (a ``StructureMissing``). The result's ``report.parse_strategy`` says which one produced the offers. Raises
    ``StructureMissing`` when neither finds a price (the fallback's quarantined rows, if any,
    travel on the exception's ``report``). ``structured``: the structured reader's outcome when
    the caller already read the page with it (``scrapers/days.py`` choosing a live page).
    """
    from gpuprice.scrapers.bounds import parse_time_limit
    from gpuprice.scrapers.fallback import parse_with_fallback

    with parse_time_limit(provider):  # a page built to stall the reader fails this provider alone
        return parse_with_fallback(provider_parser(provider), content, observed_on, structured)


def parse_reuse_key(provider: str, sha256: str, day: dt.date) -> tuple[str, str, dt.date | None]:
    """Parses with equal keys give equal results: same bytes and parser version, and the same
    date when the parser reads it (``PARSE_READS_DATE``)."""
    parser = provider_parser(provider)
    reads_date = bool(getattr(parser, "PARSE_READS_DATE", False))
    return (sha256, parser.PARSER_VERSION, day if reads_date else None)
