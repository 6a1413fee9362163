"""Vast.ai: the marketplace's offer search (``console.vast.ai/api/v0/bundles/``), stored as
per-day statistics rather than every listing.

Vast is a marketplace: independent hosts list machines at their own prices and the listings
change by the minute. A day's snapshot therefore keeps, per GPU name and GPU count, statistics of
the rentable listings (grouped by GPU name, memory per GPU and GPU count; SKU "H100 SXM 80GB
x8"), each offer ``community`` (third-party hosts) with ``capacity`` = the number
of listings it rests on (``available`` true):

- on-demand asks (``dph_total``: the machine's hourly price, storage and bandwidth excluded as
  the search prices them), tier ``on_demand``: the median per-GPU ask with ``price_basis``
  "list" (the typical asking price), and the minimum with "lowest_now" (the cheapest machine
  right now);
- interruptible bid floors (``min_bid``: the least a bid must offer, not what it wins at), tier
  ``spot``: the median floor with ``price_basis`` "bid_floor".

A median needs at least :data:`MIN_LISTINGS_FOR_MEDIAN` listings: with fewer, none is published
(the minimum still is: one machine at that price was there) and a report note names the groups.
The report also says how many listings the day's statistics rest on. Per GPU = price /
``num_gpus`` (whole GPUs: ``gpu_frac`` is the share of the machine's GPUs the listing rents, "Ratio
of GPUs in the offer to gpus in the system" in Vast's search documentation, so a 1-GPU listing of a
2-GPU machine has 0.5 and is a whole GPU, as in getcomputable/gpu-index
tests/fixtures/observatory/vast/h100_sxm_asc.json @055204ad); a listing seen in two searches (same
``id``) counts once. ``gpu_name`` ("H100 SXM", "RTX 4090") maps through the
GPU-name catalog with ``gpu_ram`` (MiB) as the memory hint.

Memory: ``gpu_ram`` is what the host's driver reports, the card's memory less what ECC and the
driver reserve, in MiB: 46068 (45 GiB) for an L40S sold with 48 GB, 143771 (140 GiB) for an H200,
275040 (269 GiB) for a B300 sold with 288 GB (getcomputable/gpu-index
tests/fixtures/observatory/vast/b300_asc.json @055204adf5e64e62595f97c49b7eb65400149871). Listings
are grouped by that reading in GiB (the SKU keeps it: "B300 269GB x2"), but the offer's ``vram_gb``
is, as at every other provider, the memory the card is sold with: the catalog's figure for the
GPU's slug (``scrapers/gpu_memory.py``) when the reading is that card's (at least
:data:`SAME_CARD_MEMORY_SHARE` of it and not above it) or the listings state none. A reading that is not (a GH200 of 144 GB
beside the catalog's 96 GB) or a GPU the catalog does not know keeps the reading. A report note
names each group whose memory was read so ("B300 269 -> 288 GB"). Converting MiB to decimal GB
(x 1.048576) would not give the size as sold either: HBM cards are sold in binary sizes (80 GB =
81920 MiB), so an H100's 81559 MiB would read as 86 GB.

Response fields read: ``offers[]`` (or a bare list of listings, as trackers store it) with
``id``, ``gpu_name``, ``num_gpus``, ``gpu_ram``, ``dph_total``, ``min_bid``, ``rentable``,
``rented``.

Coverage: a search without an API key returns at most 64 listings (a public tracker's real
keyless response, munkhbayarbr/gpu-radar ``data/offers.json`` @3c84bca0, holds exactly 64, all
consumer cards: the cheapest of the whole market). So the live fetch asks, besides the general
search, one search per family of datacenter GPUs (:data:`DATACENTER_GPU_NAMES`, the documented
``gpu_name`` ``in`` filter of the search API, cheapest first): each family gets its own listings
even when every search is capped. A page of exactly 64 listings is noted as possibly capped.

API key: Vast.ai's API documentation (vast.ai/developers/api, docs.vast.ai) says requests
carry an API key as a Bearer token. ``GPUPRICE_VASTAI_API_KEY`` (optional; the fetcher sends it
as ``Authorization: Bearer`` to Vast's host only, never logs or stores it) is used when set, and
then the ``limit`` of each search applies in full.
"""

from __future__ import annotations

import datetime as dt
import json
import statistics
from collections import defaultdict
from decimal import Decimal
from typing import Any, NamedTuple
from urllib.parse import quote

from gpuprice.scrapers.gpu_memory import sold_memory_gb
from gpuprice.scrapers.identity import Identity
from gpuprice.scrapers.json_pages import json_pages, positive_price
from gpuprice.scrapers.offer import ParseResult, PriceUnit, StructureMissing, Tier
from gpuprice.scrapers.offer_sink import OfferSink
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.parsing import clean_text, parse_number

PROVIDER = "vastai"
PARSER_VERSION = "vastai/5"  # 5: vram_gb is the card's memory as sold, not the driver's GiB reading
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
# The search's gpu_name values of the datacenter GPUs a training planner asks about, one search
# per family (names as Vast's listings write them: "H100 SXM", "A100 SXM4", "RTX 6000Ada").
DATACENTER_GPU_NAMES: tuple[tuple[str, ...], ...] = (
    ("H100 SXM", "H100 PCIE", "H100 NVL"),
    ("H200", "H200 NVL"),
    ("B200",),
    ("A100 SXM4", "A100 PCIE"),
    ("L40S", "L40"),
    ("RTX 6000Ada", "RTX A6000", "A40"),
)
# The fewest listings a median is published from: with one or two, the "typical" price is one
# host's ask (or the mean of two), which says nothing about the market.
MIN_LISTINGS_FOR_MEDIAN = 3
# What Vast.ai returns at most to a search without an API key.
ANONYMOUS_CAP = 64
_MIB_PER_GB = 1024


def search_url(query: dict[str, Any]) -> str:
    return f"{API_URL}?q={quote(json.dumps(query, separators=(',', ':')))}"


def live_requests() -> list[PageRequest]:
    """The general search, then one search per datacenter GPU family, stored as one combined page
    (a family's search may fail without failing the day)."""
    requests = [PageRequest(url=search_url(SEARCH_QUERY), kind="json", combine=True)]
    for names in DATACENTER_GPU_NAMES:
        query = {"gpu_name": {"in": list(names)}, **SEARCH_QUERY}
        requests.append(PageRequest(url=search_url(query), kind="json", combine=True, optional=True))
    return requests


def parse(content: bytes, observed_on: dt.date | None = None) -> ParseResult:
    sink = OfferSink(PROVIDER)
    listings: list[Any] = []
    structured = False
    for _url, body in json_pages(content, sink):
        if isinstance(body, dict) and isinstance(body.get("offers"), list):
            page = body["offers"]
        elif isinstance(body, list) and body and all(isinstance(x, dict) and "gpu_name" in x for x in body):
            page = body  # the listings alone, as trackers store the response
            sink.note("listings without the search response's 'offers' envelope")
        else:
            continue
        structured = True
        listings.extend(page)
        if len(page) == ANONYMOUS_CAP:
            sink.note(
                f"a search returned exactly {ANONYMOUS_CAP} listings, Vast.ai's cap without an API key: "
                "the statistics may rest on the cheapest listings only"
            )
    if not structured:
        raise StructureMissing(PROVIDER, "no offers list in the bundles response")
    groups: dict[_Group, list[Decimal]] = defaultdict(list)
    seen_ids: set[Any] = set()
    for listing in listings:
        listing_id = listing.get("id") if isinstance(listing, dict) else None
        if isinstance(listing_id, (int, str)) and not isinstance(listing_id, bool):
            if listing_id in seen_ids:
                continue  # the same listing from two searches counts once
            seen_ids.add(listing_id)
        sink.report.rows_seen += 1
        _collect(listing, groups, sink)
    groups = _merge_memory_readings(groups)
    too_few: list[str] = []
    read_as_sold: dict[str, None] = {}
    for group, prices in groups.items():
        enough, sold = _emit_statistics(group, prices, sink)
        if not enough:
            too_few.append(f"{_label(group)} {group.tier} ({len(prices)})")
        if sold is not None and sold != group.vram_gb:
            read_as_sold[f"{group.name} {group.vram_gb} -> {sold:g} GB"] = None
    asks, bids = (
        sum(len(prices) for group, prices in groups.items() if group.tier == wanted)
        for wanted in ("on_demand", "spot")
    )
    sink.note(
        f"statistics rest on {sink.report.rows_seen} listings: {asks} on-demand asks and {bids} bid floors "
        f"of {len({group.name for group in groups})} GPU names"
    )
    if too_few:
        sink.note(
            f"no median published with fewer than {MIN_LISTINGS_FOR_MEDIAN} listings: {', '.join(too_few)}"
        )
    if read_as_sold:
        sink.note(
            "memory per GPU as the card is sold, not the listings' gpu_ram reading (GiB): "
            + ", ".join(read_as_sold)
        )
    return sink.result()


class _Group(NamedTuple):
    """Listings one statistic is taken over: same GPU name, memory per GPU, GPU count and tier.
    Memory is part of it: "A100 SXM4" listings of 40 and 80 GB (or an 8 and a 16 GB "RTX 5060
    Ti") are different cards at different prices. Hosts report a card's memory a little under its
    size when ECC or the driver reserves some (``gpu_ram`` 39936 MiB for an A100 40GB, 15 GB for a
    T4, 45 GB for a Quadro RTX 8000): see :func:`_merge_memory_readings`."""

    name: str
    vram_gb: int | None
    gpus: int
    tier: str


def _label(group: _Group) -> str:
    """The group as its SKU reads: "H100 SXM 80GB x8" (no memory when listings gave none)."""
    memory = f" {group.vram_gb}GB" if group.vram_gb else ""
    return f"{group.name}{memory} x{group.gpus}"


def _collect(listing: Any, groups: dict[_Group, list[Decimal]], sink: OfferSink) -> None:
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
    ram = parse_number(listing.get("gpu_ram")) if listing.get("gpu_ram") is not None else None
    vram = round(ram / _MIB_PER_GB) if ram else None
    for field, tier in (("dph_total", "on_demand"), ("min_bid", "spot")):
        try:
            price = positive_price(listing.get(field))
        except ValueError as exc:
            sink.reject(raw, f"{field}: {exc}")
            continue
        if price is not None:
            groups[_Group(name, vram, count, tier)].append(price / count)


# A reading at least this share of a larger reading of the same GPU name is the same card.
SAME_CARD_MEMORY_SHARE = 0.9


def _merge_memory_readings(groups: dict[_Group, list[Decimal]]) -> dict[_Group, list[Decimal]]:
    """Groups of one GPU name whose memory readings differ by less than 10 % joined under the
    larger reading (39 and 40 GB "A100 SXM4" are one card; 10 and 12 GB "RTX 3080" stay apart)."""
    readings: dict[str, set[int]] = defaultdict(set)
    for group in groups:
        if group.vram_gb:
            readings[group.name].add(group.vram_gb)

    def card_memory(name: str, vram: int | None) -> int | None:
        if not vram:
            return vram
        return max(r for r in readings[name] if vram >= SAME_CARD_MEMORY_SHARE * r)

    merged: dict[_Group, list[Decimal]] = defaultdict(list)
    for group, prices in groups.items():
        merged[group._replace(vram_gb=card_memory(group.name, group.vram_gb))].extend(prices)
    return merged


def sold_memory(gpu: str, reading: int | None) -> float | None:
    """The memory per GPU an offer states: the catalog's size as sold when the listings' reading
    (GiB) is that card's, else the reading (see the module docstring)."""
    sold = sold_memory_gb(gpu)
    if sold is None:
        return float(reading) if reading else None
    if not reading or SAME_CARD_MEMORY_SHARE * sold <= reading <= sold:
        return sold
    return float(reading)


def _emit_statistics(group: _Group, prices: list[Decimal], sink: OfferSink) -> tuple[bool, float | None]:
    """The group's offers; whether it had enough listings for a median, and its memory per GPU."""
    values = sorted(prices)
    gpu = sink.gpu_slug(group.name, float(group.vram_gb) if group.vram_gb else None)
    vram = sold_memory(gpu, group.vram_gb)
    raw = f"{_label(group)} {group.tier}: {len(values)} listings, {values[0]}..{values[-1]}"
    count = group.gpus
    common: dict[str, Any] = dict(
        gpu=gpu,
        gpu_raw=group.name,
        gpu_count=count,
        vram_gb=vram,
        tier=group.tier,
        community=True,
        sku=_label(group),
        available=True,
        capacity=len(values),
    )
    enough = len(values) >= MIN_LISTINGS_FOR_MEDIAN
    if enough:
        median = Decimal(str(statistics.median(values)))
        basis = "list" if group.tier == "on_demand" else "bid_floor"
        sink.add(
            raw, usd_per_gpu_hour=median, usd_per_instance_hour=median * count, price_basis=basis, **common
        )
    if group.tier == "on_demand":  # the cheapest ask is a machine one could rent now, however few there are
        sink.add(
            raw,
            usd_per_gpu_hour=values[0],
            usd_per_instance_hour=values[0] * count,
            price_basis="lowest_now",
            **common,
        )
    return enough, vram
