"""A page yields offers only under its own provider's name (scrapers/identity.py).

Every page the project has (its fixtures, the sample archive, the real captures in
../shared/realpages when present) is parsed under every other provider's name: each must exit 3
with no offer. Pages of sites the product does not support, and pages that name no provider,
are refused under all ten names.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from realpages import MISSING_REASON, REALPAGES, all_real_captures

from gpuprice.scrapers.identity import Identity, NotProvidersPage, confirm, declared_site
from gpuprice.scrapers.offer import PRICE_BASES, PROVIDERS, Offer, StructureMissing
from gpuprice.scrapers.registry import IDENTITIES, parse_page

REPO = Path(__file__).resolve().parent.parent
UNRELATED = REPO / "tests" / "fixtures" / "pages" / "unrelated"
_PAGE_SUFFIXES = (".html", ".json", ".gz")


def _own_pages() -> list[tuple[str, Path]]:
    pages = []
    for provider in PROVIDERS:
        for folder in (
            REPO / "tests" / "fixtures" / "pages" / provider,
            REPO / "scrapers" / "sample_archive" / provider,
        ):
            pages.extend((provider, p) for p in sorted(folder.rglob("*")) if p.suffix in _PAGE_SUFFIXES)
    return pages


def _refused(provider: str, body: bytes) -> StructureMissing:
    with pytest.raises(StructureMissing) as info:
        parse_page(provider, body)
    return info.value


@pytest.mark.parametrize(("owner", "path"), _own_pages(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_a_project_page_yields_no_offer_under_another_providers_name(owner: str, path: Path) -> None:
    body = path.read_bytes()
    for provider in PROVIDERS:
        if provider != owner:
            _refused(provider, body)


def test_every_real_capture_yields_no_offer_under_another_providers_name() -> None:
    captures = all_real_captures()
    if not captures:
        pytest.skip(MISSING_REASON)
    for owner, path in captures:
        body = path.read_bytes()
        for provider in PROVIDERS:
            if provider == owner:
                continue
            refusal = _refused(provider, body)
            assert (
                isinstance(refusal, NotProvidersPage) or refusal.report is None or not refusal.report.offers
            ), (
                owner,
                path.name,
                provider,
            )


def test_the_contracts_parse_exits_3_with_one_line_on_another_providers_real_page(tmp_path: Path) -> None:
    capture = REALPAGES / "crusoe" / "getcomputable_crusoe_pricing_2026-08_gpu-section.html"
    if not capture.is_file():
        pytest.skip(MISSING_REASON)
    done = subprocess.run(
        [sys.executable, "-m", "gpuprice", "parse", "lambda", str(capture)],
        capture_output=True,
        text=True,
        env={"GPUPRICE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "gpuprice: lambda: page does not look like lambda's pricing: no lambda domain, brand or page structure on it"
    ]


@pytest.mark.parametrize("page", sorted(p.name for p in UNRELATED.glob("*.html")))
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_page_of_no_supported_provider_yields_no_offer(page: str, provider: str) -> None:
    refusal = _refused(provider, (UNRELATED / page).read_bytes())
    assert refusal.report is None or refusal.report.offers == 0


def test_a_site_that_names_itself_is_that_site_whatever_it_mentions() -> None:
    page = (UNRELATED / "other_cloud_pricing.html").read_text()
    assert declared_site(page) == (
        ["www.gpus.example.net", "www.gpus.example.net"],
        ["Example GPU Cloud"],
    )
    # It mentions Lambda, CoreWeave and Runpod, and its tables would read; still not theirs.
    for provider in ("lambda", "coreweave", "runpod"):
        with pytest.raises(NotProvidersPage, match="the page declares itself as www.gpus.example.net"):
            confirm(provider, page, IDENTITIES)
    # Served at the provider's own host, the same page is the provider's.
    own = page.replace("www.gpus.example.net", "lambda.ai").replace("Example GPU Cloud", "Lambda")
    assert confirm("lambda", own, IDENTITIES)


def test_without_a_declared_site_the_provider_named_most_owns_the_page() -> None:
    fragment = "<div>NVIDIA H100 $2.10/GPU-hr</div><a href='https://crusoe.ai/contact-sales'>Crusoe</a>"
    assert confirm("crusoe", fragment, IDENTITIES) == {"crusoe.ai": 1, "brand name": 2}
    with pytest.raises(NotProvidersPage, match="no nebius domain, brand or page structure"):
        confirm("nebius", fragment, IDENTITIES)
    # A Crusoe page that mentions Nebius once is still Crusoe's, not Nebius's.
    with pytest.raises(NotProvidersPage, match="it names crusoe 3 times and nebius 1"):
        confirm("nebius", fragment + "<p>compared with Nebius</p>", IDENTITIES)


def test_domains_match_as_hosts_only() -> None:
    lambda_ = Identity("lambda", domains=("lambda.ai",))
    assert lambda_.evidence("https://lambda.ai/x www.lambda.ai https:\\u002F\\u002Flambda.ai/") == {
        "lambda.ai": 3
    }
    assert lambda_.evidence("notlambda.ai lambda.aix") == {}
    aws_lambda = "AWS Lambda functions, Amazon Lambda"
    assert IDENTITIES["lambda"].evidence(aws_lambda) == {}


def test_json_responses_are_known_by_their_shape() -> None:
    assert confirm("runpod", '{"data": {"gpuTypes": [{"securePrice": 2.99}]}}', IDENTITIES)
    assert confirm("azure", '{"Items": [{"armSkuName": "Standard_ND96isr_H100_v5"}]}', IDENTITIES)
    with pytest.raises(NotProvidersPage):
        confirm("azure", '{"data": {"gpuTypes": [{"securePrice": 2.99}]}}', IDENTITIES)


def test_every_provider_declares_an_identity_with_evidence_to_look_for() -> None:
    assert set(IDENTITIES) == set(PROVIDERS)
    for name, identity in IDENTITIES.items():
        assert identity.provider == name and identity.domains


def test_price_bases_include_bid_floors_and_contracts() -> None:
    assert PRICE_BASES == ("list", "from", "lowest_now", "bid_floor", "contract")
    for basis in PRICE_BASES:
        offer = Offer(
            provider="lambda",
            gpu="h100-sxm",
            gpu_raw="H100",
            gpu_count=1,
            usd_per_gpu_hour=2.0,
            sku="x",
            price_basis=basis,
        )
        assert offer.contract_dict()["price_basis"] == basis
    with pytest.raises(ValueError, match="price_basis"):
        Offer(
            provider="lambda",
            gpu="h100-sxm",
            gpu_raw="H100",
            gpu_count=1,
            usd_per_gpu_hour=2.0,
            sku="x",
            price_basis="median",
        )


def test_a_large_response_is_confirmed_quickly() -> None:
    """A 4 MB price document: every pattern is tried only where its literal occurs."""
    import time

    body = (REPO / "scrapers" / "sample_archive" / "aws" / "2026-01-21.json").read_text()
    big = body * max(1, 4_000_000 // len(body))
    started = time.perf_counter()
    assert confirm("aws", big, IDENTITIES)
    assert time.perf_counter() - started < 3.0  # about 0.2 s here; 16 s before the literal test
