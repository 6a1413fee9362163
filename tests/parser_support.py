"""What the provider parser tests (tests/test_parser_*.py) share.

Expected offers with every field, fixture and sample-archive pages of a provider, the observed
prices the archive pages were rebuilt from (the archive's own copy and the shared research data
it was copied from), pages without a price structure, and the provider module's interface.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

import pytest

from conftest import OBSERVED_PRICES
from gpuprice.scrapers.offer import CONTRACT_FIELDS, ParseResult, StructureMissing
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.registry import provider_parser

REPO = Path(__file__).resolve().parent.parent
# The note the HTML parsers add when a page had bytes that are not UTF-8.
UNDECODABLE_NOTE = "page is not valid UTF-8; undecodable bytes replaced"


def fixture_dir(provider: str) -> Path:
    return REPO / "tests" / "fixtures" / "pages" / provider


def archive_dir(provider: str) -> Path:
    return REPO / "scrapers" / "sample_archive" / provider


# ----- expected offers ------------------------------------------------------------------------------
# Every field of an offer as ``Offer.model_dump(mode="json")`` writes it, with the usual values of
# a plain on-demand list price; ``provider`` is the only field without one.
_OFFER_DEFAULTS: dict[str, object] = {
    "gpu": None,
    "gpu_raw": None,
    "gpu_count": None,
    "vram_gb": None,
    "tier": "on_demand",
    "community": False,
    "commitment_months": None,
    "usd_per_gpu_hour": None,
    "usd_per_instance_hour": None,
    "region": None,
    "available": None,
    "effective_from": None,
    "sku": None,
    "vcpus": None,
    "ram_gb": None,
    "storage_gb": None,
    "price_basis": "list",
    "capacity": None,
    "interruption_bucket": None,
}


def full_offer(provider: str, **fields: object) -> dict:
    """An expected offer with every field: the defaults above, overridden by ``fields``."""
    base = {"provider": provider, **_OFFER_DEFAULTS}
    assert set(fields) <= set(base), set(fields) - set(base)
    return base | fields


def dumped(result: ParseResult) -> list[dict]:
    return [o.model_dump(mode="json") for o in result.offers]


def assert_offers(result: ParseResult, expected: list[dict]) -> None:
    """The offers are ``expected`` in order, in the parse contract's fields and in every field."""
    assert [o.contract_dict() for o in result.offers] == [
        {k: e[k] for k in CONTRACT_FIELDS} for e in expected
    ]
    assert dumped(result) == expected


def report_of(result: ParseResult, provider: str, strategy: str = "structured") -> dict:
    """The parse report without its provider and strategy (checked to be ``provider`` and
    ``strategy``)."""
    data = result.report.model_dump()
    assert data.pop("provider") == provider
    assert data.pop("parse_strategy") == strategy
    return data


# ----- pages without prices -----------------------------------------------------------------------------
def assert_structure_missing(
    parse: Callable[[bytes], ParseResult], content: bytes, provider: str, what: str
) -> None:
    """``content`` is refused as a page without a price structure, naming the provider and ``what``."""
    with pytest.raises(StructureMissing) as info:
        parse(content)
    assert info.value.provider == provider
    assert info.value.what == what


def assert_undecodable_bytes_noted(result: ParseResult, offers: int) -> None:
    """A page with stray non-UTF-8 bytes still gives its ``offers``, and says the bytes were replaced."""
    assert len(result.offers) == result.report.offers == offers
    assert UNDECODABLE_NOTE in result.report.notes


# ----- sample archive -----------------------------------------------------------------------------------
def archive_page_names(provider: str, suffixes: Iterable[str] = (".html",)) -> list[str]:
    """The provider's archived pages (file names, oldest first)."""
    wanted = tuple(suffixes)
    return sorted(p.name for p in archive_dir(provider).iterdir() if p.suffix in wanted)


def parse_archive_page(module: ModuleType, name: str, *, dated: bool) -> ParseResult:
    """An archived page of ``module``'s provider, parsed as of the page's date (``dated``) or as
    ``gpuprice parse FILE`` without --observed-on reads it. It must parse without rejected rows
    or unknown GPUs."""
    observed_on = dt.date.fromisoformat(name[:10]) if dated else None
    result = module.parse((archive_dir(module.PROVIDER) / name).read_bytes(), observed_on=observed_on)
    assert result.report.rejected == [] and result.report.unknown_gpus == [], (name, result.report)
    return result


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def archive_observations(provider: str, name: str | None = None) -> list[dict[str, str]]:
    """Rows of the archive's observed_prices.csv: all, or those observed on page ``name``'s date."""
    rows = _csv_rows(archive_dir(provider) / "observed_prices.csv")
    return rows if name is None else [r for r in rows if r["observed_on"] == name.split(".")[0]]


def cited_observations() -> list[dict[str, str]]:
    """Rows of the product's cited public observations (scrapers/data/observed_prices.csv)."""
    return _csv_rows(OBSERVED_PRICES)


def assert_archive_sources_copied(provider: str, names: Iterable[str]) -> None:
    """The archive's observed prices are the provider's rows of the cited observations, and its
    SOURCES.md calls the pages reconstructions and has a section per page ``names``."""
    local = archive_observations(provider)
    assert local and all(r["provider"] == provider for r in local)
    cited = cited_observations()
    assert all(row in cited for row in local)
    sources = (archive_dir(provider) / "SOURCES.md").read_text()
    assert "reconstructions, not captures" in sources
    for name in names:
        assert f"## {name}" in sources


# ----- module interface ---------------------------------------------------------------------------------
def assert_registered(module: ModuleType, provider: str, parser_version: str, pricing_url: str) -> None:
    """The registry returns ``module`` for ``provider``, and the module names itself so."""
    assert provider_parser(provider) is module
    assert (provider, parser_version, pricing_url) == (
        module.PROVIDER,
        module.PARSER_VERSION,
        module.PRICING_URL,
    )


def live_request_summary(module: ModuleType) -> list[tuple[str, str, str, bool]]:
    """(url, method, kind, fallback) of each page request of a live fetch, in order."""
    requests = module.live_requests()
    assert [type(r) for r in requests] == [PageRequest] * len(requests)
    return [(r.url, r.method, r.kind, r.fallback) for r in requests]
