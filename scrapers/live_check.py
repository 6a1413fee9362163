"""``gpuprice check-live``: fetch each provider's live source once, store it, parse it, compare.

An operator runs this to see whether the real sites still parse before a scheduled run meets
them: per provider the HTTP status, bytes, the reader that produced the offers (structured or
the fallback extractor), offers, unknown GPU names and the difference against the newest stored
snapshot (new, gone and changed prices).

Pages come through the same :class:`PoliteFetcher` as ``--source live`` (robots.txt, backoff,
one host at a time) and are kept in the raw page store before parsing. For tests, the hosts can
be replaced: a ``base_url`` (the CLI passes ``GPUPRICE_LIVE_BASE_URL``) sends each request to
``<base>/<provider><path>?<query>`` (``https://www.runpod.io/pricing`` ->
``http://127.0.0.1:8000/runpod/pricing``).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from gpuprice.scrapers.collect import iter_live_pages
from gpuprice.scrapers.fallback import confirm_page
from gpuprice.scrapers.fetch import FetchError, PoliteFetcher
from gpuprice.scrapers.gpu_names import UNKNOWN
from gpuprice.scrapers.offer import Offer, ParseStrategy, StructureMissing, offer_key
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.registry import parse_page, provider_parser

# A price moving by less than this is the same price (rounding in the page).
_SAME_PRICE = 0.00005


class SnapshotPrice(BaseModel):
    """One offer of the newest stored snapshot, as the comparison needs it."""

    sku: str
    gpu_count: int
    tier: str
    community: bool = False
    commitment_months: int | None = None
    region: str | None = None
    effective_from: dt.date | None = None
    price_basis: str = "list"
    usd_per_gpu_hour: float

    @property
    def key(self) -> tuple:
        return offer_key(self)


class PriceChange(BaseModel):
    offer: str
    old_usd_per_gpu_hour: float
    new_usd_per_gpu_hour: float


class SnapshotDiff(BaseModel):
    snapshot_date: dt.date | None = Field(description="the snapshot compared with; None when there is none")
    new: list[str] = Field(default_factory=list)
    gone: list[str] = Field(default_factory=list)
    changed: list[PriceChange] = Field(default_factory=list)


class LiveCheck(BaseModel):
    """What one provider's live source gave."""

    provider: str
    url: str | None = None
    http_status: int | None = None
    bytes: int = 0
    stored_path: str | None = None
    strategy: ParseStrategy | None = None
    offers: int = 0
    rejected: int = 0
    unknown_gpus: list[str] = Field(default_factory=list)
    # Identity: what showed the page is the provider's ("declared site lambda.ai", "crusoe.ai x3").
    identity: str | None = None
    # Coverage: listings (rows, cards, API items) the parser saw, and offers whose GPU is known.
    listings_seen: int = 0
    gpus_mapped: int = 0
    diff: SnapshotDiff | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def live_requests(provider: str, base_url: str | None = None) -> list[PageRequest]:
    """The provider's live requests, re-pointed at ``base_url`` when one is given."""
    requests = provider_parser(provider).live_requests()
    if not base_url:
        return requests
    base = base_url.rstrip("/")
    moved = []
    for request in requests:
        parts = urlsplit(request.url)
        url = f"{base}/{provider}{parts.path or '/'}" + (f"?{parts.query}" if parts.query else "")
        moved.append(request.model_copy(update={"url": url}))
    return moved


def describe(key: tuple) -> str:
    """'8x H100 SXM on_demand', with community, term, region and schedule when they apply."""
    sku, count, tier, community, months, region, effective, basis = key
    named_count = bool(re.match(rf"(gpu_)?{count}x", str(sku), re.I))  # "8x H100", "gpu_8x_b200" say it
    parts = [f"{sku} x{count}" if count != 1 and not named_count else sku, tier]
    if community:
        parts.append("community")
    if months:
        parts.append(f"{months}mo")
    if region:
        parts.append(region)
    if effective:
        parts.append(f"from {effective}")
    if basis != "list":
        parts.append(basis)
    return " ".join(str(p) for p in parts)


def identity_summary(evidence: dict[str, int]) -> str:
    """'lambda.ai x12, 1-Click Clusters x2': the evidence a page is its provider's, most first."""
    ranked = sorted(evidence.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(
        f"{name.removeprefix('(?i)')} x{count}" if count > 1 else name for name, count in ranked[:4]
    )


def diff_against(
    offers: Sequence[Offer], previous: Sequence[SnapshotPrice], day: dt.date | None
) -> SnapshotDiff:
    """New, gone and changed prices of ``offers`` against the stored snapshot ``previous``."""
    diff = SnapshotDiff(snapshot_date=day)
    if day is None:
        return diff
    old = {p.key: p.usd_per_gpu_hour for p in previous}
    new = {o.key: o.usd_per_gpu_hour for o in offers}
    diff.new = [describe(k) for k in new if k not in old]
    diff.gone = [describe(k) for k in old if k not in new]
    diff.changed = [
        PriceChange(offer=describe(k), old_usd_per_gpu_hour=old[k], new_usd_per_gpu_hour=v)
        for k, v in new.items()
        if k in old and abs(old[k] - v) > _SAME_PRICE
    ]
    return diff


def check_provider(
    provider: str,
    *,
    home: Path,
    previous: Sequence[SnapshotPrice] = (),
    previous_date: dt.date | None = None,
    fetcher: PoliteFetcher | None = None,
    base_url: str | None = None,
    today: dt.date | None = None,
) -> LiveCheck:
    """Fetch (each request at most once), store, parse and compare one provider; never raises
    for a fetch or parse failure (the result's ``error`` says what went wrong)."""
    day = today or dt.datetime.now(dt.UTC).date()
    check = LiveCheck(provider=provider)
    pages = iter_live_pages(
        provider,
        day,
        home=home,
        fetcher=fetcher,
        today=day,
        requests=live_requests(provider, base_url),
        parser_version=provider_parser(provider).PARSER_VERSION,
    )
    last_error: str | None = None
    try:
        for page in pages:
            check.url = page.raw.url
            check.http_status = page.raw.http_status
            check.bytes = len(page.body)
            check.stored_path = str(page.raw.stored_path)
            try:
                result = parse_page(provider, page.body, observed_on=day)
            except StructureMissing as exc:
                last_error = f"parse failed: {exc}"
                continue  # the provider's fallback page, if it has one
            check.strategy = result.report.parse_strategy
            check.identity = identity_summary(confirm_page(provider_parser(provider), page.body))
            check.listings_seen = result.report.rows_seen
            check.gpus_mapped = sum(1 for o in result.offers if o.gpu != UNKNOWN)
            check.offers = len(result.offers)
            check.rejected = len(result.report.rejected)
            check.unknown_gpus = list(result.report.unknown_gpus)
            check.diff = diff_against(result.offers, previous, previous_date)
            return check
    except FetchError as exc:
        check.error = f"fetch failed: {exc}"
        return check
    finally:
        pages.close()
    check.error = last_error or "nothing fetched"
    return check
