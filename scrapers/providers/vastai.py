"""Vast.ai: the marketplace's offer search (``console.vast.ai/api/v0/bundles/``), stored as
per-day statistics rather than every listing.

Vast is a marketplace: independent hosts list machines at their own prices and the listings
change by the minute. A day's snapshot therefore keeps, per GPU name and GPU count, the
statistics of the rentable listings: the median per-GPU price (``price_basis`` "list": the
typical asking price), the minimum ("lowest_now": the cheapest machine right now) and the
number of listings (``capacity``; ``available`` is true when there is at least one). Every
offer is ``community`` (third-party hosts). On-demand asks (``dph_total``: the machine's hourly
price, storage and bandwidth excluded as the search prices them) are tier ``on_demand``; the
interruptible bid floors (``min_bid``) are tier ``spot``. Per GPU = price / ``num_gpus``;
fractional-GPU listings (``gpu_frac`` < 1) are skipped. ``gpu_name`` ("H100 SXM", "RTX 4090")
maps through the GPU-name catalog with ``gpu_ram`` (MiB) as the memory hint.

Response fields read: ``offers[]`` with ``gpu_name``, ``num_gpus``, ``gpu_ram``, ``dph_total``,
``min_bid``, ``gpu_frac``, ``rentable``, ``rented``.

API key: Vast.ai's API documentation (vast.ai/developers/api, docs.vast.ai) says requests
carry an API key as a Bearer token. ``GPUPRICE_VASTAI_API_KEY`` (optional; the fetcher sends it
as ``Authorization: Bearer`` to Vast's host only, never logs or stores it) is used when set.
Without it the search is tried anonymously; whether the offer search still answers without a
key could not be confirmed offline, and a 401/403 fails only this provider.
"""

from __future__ import annotations

import datetime as dt
import json
import statistics
from collections import defaultdict
from decimal import Decimal
from typing import Any
from urllib.parse import quote

from gpuprice.scrapers.identity import Identity
from gpuprice.scrapers.json_pages import json_pages, positive_price
from gpuprice.scrapers.offer import ParseResult, PriceUnit, StructureMissing, Tier
from gpuprice.scrapers.offer_sink import OfferSink
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.parsing import clean_text, parse_number

PROVIDER = "vastai"
PARSER_VERSION = "vastai/1"
PRICING_URL = "https://vast.ai/pricing"
UNLABELED_TIER: Tier | None = None
PRICE_UNIT: PriceUnit = "instance_hour"
IDENTITY = Identity(
    PROVIDER,
    domains=("vast.ai",),
    brands=(r"\bVast\.ai\b",),
    markers=(r"\bdph_total\b", r"\bmin_bid\b", r"\bdlperf\b"),  # the search API's fields
)
API_URL = "https://console.vast.ai/api/v0/bundles/"
# Rentable, not rented, whole machines; the 2,000 cheapest (about 4 MB): the statistics describe
# those, which is the part of the market a buyer meets first.
SEARCH_QUERY: dict[str, Any] = {
    "rentable": {"eq": True},
    "rented": {"eq": False},
    "type": "on-demand",
    "order": [["dph_total", "asc"]],
    "limit": 2000,
}
_MIB_PER_GB = 1024


def live_requests() -> list[PageRequest]:
    query = quote(json.dumps(SEARCH_QUERY, separators=(",", ":")))
    return [PageRequest(url=f"{API_URL}?q={query}", kind="json")]


def parse(content: bytes, observed_on: dt.date | None = None) -> ParseResult:
    sink = OfferSink(PROVIDER)
    listings: list[Any] = []
    structured = False
    for _url, body in json_pages(content, sink):
        if isinstance(body, dict) and isinstance(body.get("offers"), list):
            structured = True
            listings.extend(body["offers"])
    if not structured:
        raise StructureMissing(PROVIDER, "no offers list in the bundles response")
    groups: dict[tuple[str, int, str], list[tuple[Decimal, float | None]]] = defaultdict(list)
    for listing in listings:
        sink.report.rows_seen += 1
        _collect(listing, groups, sink)
    for (name, count, tier), prices in groups.items():
        _emit_statistics(name, count, tier, prices, sink)
    return sink.result()


def _collect(listing: Any, groups: dict, sink: OfferSink) -> None:
    if not isinstance(listing, dict):
        sink.reject(clean_text(json.dumps(listing))[:200], "listing is not an object")
        return
    name = clean_text(listing.get("gpu_name"))
    count = listing.get("num_gpus")
    raw = f"{listing.get('id')} | {name} | x{count} | dph_total={listing.get('dph_total')!r}"
    if not name or not isinstance(count, int) or isinstance(count, bool) or count < 1:
        sink.reject(raw, "listing without gpu_name or a whole num_gpus")
        return
    if listing.get("rentable") is False or listing.get("rented") is True:
        return  # not rentable right now: not part of today's market
    frac = listing.get("gpu_frac")
    if isinstance(frac, (int, float)) and not isinstance(frac, bool) and frac < 1:
        sink.note("fractional-GPU listings skipped")
        return
    ram = parse_number(listing.get("gpu_ram")) if listing.get("gpu_ram") is not None else None
    vram = round(ram / _MIB_PER_GB) if ram else None
    for field, tier in (("dph_total", "on_demand"), ("min_bid", "spot")):
        try:
            price = positive_price(listing.get(field))
        except ValueError as exc:
            sink.reject(raw, f"{field}: {exc}")
            continue
        if price is not None:
            groups[(name, count, tier)].append((price / count, vram))


def _emit_statistics(
    name: str, count: int, tier: str, prices: list[tuple[Decimal, float | None]], sink: OfferSink
) -> None:
    values = sorted(price for price, _ in prices)
    memories = [vram for _, vram in prices if vram]
    vram = statistics.mode(memories) if memories else None
    gpu = sink.gpu_slug(name, vram)
    raw = f"{name} x{count} {tier}: {len(values)} listings, {values[0]}..{values[-1]}"
    common: dict[str, Any] = dict(
        gpu=gpu,
        gpu_raw=name,
        gpu_count=count,
        vram_gb=vram,
        tier=tier,
        community=True,
        sku=f"{name} x{count}",
        available=True,
        capacity=len(values),
    )
    median = Decimal(str(statistics.median(values)))
    sink.add(raw, usd_per_gpu_hour=median, usd_per_instance_hour=median * count, **common)
    sink.add(
        raw,
        usd_per_gpu_hour=values[0],
        usd_per_instance_hour=values[0] * count,
        price_basis="lowest_now",
        **common,
    )
