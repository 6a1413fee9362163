"""Every registered provider implements the typed interface and behaves as the registry documents."""

from __future__ import annotations

import datetime as dt
import inspect
import re

import pytest

from gpuprice.errors import BadInput
from gpuprice.scrapers.offer import PROVIDERS, TIERS, StructureMissing
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.registry import PARSERS, ProviderParser, parse_page, provider_parser


def test_every_provider_is_registered_once_in_contract_order() -> None:
    assert tuple(PARSERS) == PROVIDERS
    assert len({id(parser) for parser in PARSERS.values()}) == len(PROVIDERS)


@pytest.mark.parametrize("name", PROVIDERS)
def test_registered_parser_implements_the_protocol(name: str) -> None:
    parser = provider_parser(name)
    assert isinstance(parser, ProviderParser)
    assert name == parser.PROVIDER
    assert re.fullmatch(rf"{re.escape(name)}/\d+", parser.PARSER_VERSION), parser.PARSER_VERSION
    assert re.match(r"https://[a-z0-9.-]+\.[a-z]{2,}/", parser.PRICING_URL), parser.PRICING_URL
    assert parser.UNLABELED_TIER is None or parser.UNLABELED_TIER in TIERS
    assert parser.PRICE_UNIT in ("gpu_hour", "instance_hour")
    assert list(inspect.signature(parser.parse).parameters) == ["content", "observed_on"]
    requests = parser.live_requests()
    assert requests and all(isinstance(r, PageRequest) for r in requests)
    assert all(r.url.startswith("https://") for r in requests)
    assert not requests[0].fallback, "the first request must be a primary one"


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize(
    "page",
    [b"<html><body><h1>Sign in</h1><form><input name=user></form></body></html>", b"   \n"],
    ids=["login", "blank"],
)
def test_a_page_without_prices_is_refused_naming_the_provider(name: str, page: bytes) -> None:
    with pytest.raises(StructureMissing) as info:
        parse_page(name, page, observed_on=dt.date(2026, 10, 6))
    assert info.value.provider == name
    assert info.value.what
    assert str(info.value).startswith(f"{name}: no price structure found: ")


def test_an_unknown_provider_names_the_valid_ones() -> None:
    with pytest.raises(BadInput, match=r"unknown provider 'paperspace'"):
        provider_parser("paperspace")
