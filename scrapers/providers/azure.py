"""Azure: the Retail Prices API (``https://prices.azure.com/api/retail/prices``), key-less JSON.

The live fetch asks with an OData ``$filter`` for the Virtual Machines meters of the GPU sizes
listed in ``scrapers/data/instance_types.csv`` (``armSkuName eq 'Standard_ND96isr_H100_v5' or
...``), USD, and follows ``NextPageLink`` (1,000 items per page) up to :data:`MAX_PAGES`; the
pages are stored as one combined document (``scrapers/multipage.py``). A single API page
(``{"Items": [...], "NextPageLink": ...}``) parses too, and so does the bare list of items (as
public trackers store it, e.g. ewyluda/gpu-price-index ``tests/fixtures/azure.json``), noted.

Each item is one meter of one size in one region. Fields read: ``armSkuName`` (the size),
``armRegionName`` (the region, kept on the offer), ``retailPrice``, ``unitOfMeasure``,
``currencyCode``, ``type`` and ``reservationTerm``, ``meterName``, ``productName``. Rules:

- ``productName`` ending "Windows" (or "Win": "Virtual Machines NCCadsv5 Srs Win") is the Windows
  licence price: not a GPU price, skipped;
- ``type`` "Consumption": ``meterName`` ending "Spot" is tier ``spot``, "Low Priority" (the
  retired batch tier) is skipped, anything else is ``on_demand``;
- ``type`` "Reservation" with ``reservationTerm`` "1 Year"/"3 Years" is ``reserved`` with
  ``commitment_months`` 12/36. Azure states a reservation's ``retailPrice`` for the whole term
  (``unitOfMeasure`` still says "1 Hour"), so the hourly rate is price / (8,760 h x years);
- ``savingsPlan`` entries of an on-demand meter (``[{"retailPrice", "term": "1 Year"}]``, per
  hour) are ``reserved`` with the plan's term, SKU suffixed " (savings plan)" so they stay
  apart from the reservation of the same term;
- ``type`` "DevTestConsumption" (dev/test subscriptions only) is skipped;
- a price of 0 is unpriced (not an offer); a currency other than USD or a unit other than
  "1 Hour" is rejected with the row.

Trackers also keep the items renamed and cut down to ``region``, ``skuName``, ``productName``,
``pricePerHour``, ``currency`` (and sometimes ``unitOfMeasure``): Jumbo2020/gpu_prices
``azure_gpu_prices.json`` (2025-06-21). Without ``type`` and ``reservationTerm`` such a list reads
only as the API's hourly meters can be told apart: the size is ``skuName`` ("ND96isrH100v5",
"Standard_NC24ads_A100_v4") matched to the mapping CSV letters and digits only, the CSV's size
name or one of the other names its ``price_name`` lists ("ND96asr_A100_v4", "ND96amsA100v4"); a "Spot" suffix
is ``spot``, "Low Priority" is skipped, Windows and Dedicated Host products are skipped; a price
of more than $1,000 per VM-hour is a reservation's whole-term price whose term the row no longer
states (23,412 beside 4.176 for one size): not read, counted as unpriced. Sizes outside the N
(GPU) family that a tracker's name filter let through ("L48s v2" for "L4") are not GPU prices.

Prices are per VM (instance) hour; the size's GPU count comes from the mapping CSV and the
per-GPU price is the VM price divided by it. A size the CSV does not list has no known GPU
count: it is quarantined (a rejected row with the raw ``armSkuName`` and the VM price) and listed
in ``unknown_gpus``, never stored as one GPU at the VM's price.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from decimal import Decimal
from typing import Any
from urllib.parse import quote, urlencode

from gpuprice.scrapers.identity import Identity
from gpuprice.scrapers.instance_types import (
    InstanceType,
    add_instance_offer,
    lookup,
    name_key,
    provider_instance_types,
    unmapped_reason,
)
from gpuprice.scrapers.json_pages import json_pages, offered_price, positive_price
from gpuprice.scrapers.offer import ParseResult, PriceUnit, StructureMissing, Tier, round_price
from gpuprice.scrapers.offer_sink import OfferSink
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.parsing import clean_text

PROVIDER = "azure"
PARSER_VERSION = "azure/5"  # 5: older N-series sizes mapped, skuName aliases, "Srs Win" products
PRICING_URL = "https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/"
UNLABELED_TIER: Tier | None = None
PRICE_UNIT: PriceUnit = "instance_hour"
IDENTITY = Identity(
    PROVIDER,
    domains=("prices.azure.com", "azure.microsoft.com"),
    brands=(r"\bAzure\b",),
    markers=(
        r"\barmSkuName\b",  # the Retail Prices API's fields
        r"\barmRegionName\b",
        r"\bretailPrice\b",
        # its product names, as a tracker's renamed rows keep them ("Virtual Machines NDsr H100 v5 Series")
        r'"productName":\s*"Virtual Machines\b',
    ),
)
API_URL = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"
# 45 GPU sizes (32 of them older N-series sizes offered in few regions) x up to ~60 regions x ~8
# meters (Linux/Windows, Spot, Low Priority, reservations): under 20 pages; 40 is the ceiling.
MAX_PAGES = 40
HOURS_PER_YEAR = 8760
_TERM_RX = re.compile(r"^\s*(\d+)\s*years?\s*$", re.I)
# The Windows licence price's product: "... Series Windows", or abbreviated "... Srs Win" (the
# confidential NCCads H100 v5's "Virtual Machines NCCadsv5 Srs Win").
_WINDOWS_RX = re.compile(r"\bwin(?:dows)?$", re.I)
# A tracker's renamed rows (no type, no reservation term): an hourly VM price is never this high; a
# reservation's whole-term price always is (a year of the cheapest GPU VM is thousands of dollars).
MAX_VM_HOUR_USD = Decimal("1000")
TRACKER_ROWS_NOTE = (
    "price rows renamed by a tracker (skuName, productName, pricePerHour): no type or reservation term, "
    "so only hourly on-demand and spot prices are read"
)


def odata_filter(sizes: list[str]) -> str:
    """``serviceName eq 'Virtual Machines' and currencyCode eq 'USD' and (armSkuName eq ... or ...)``."""
    names = " or ".join(f"armSkuName eq '{size}'" for size in sizes)
    return f"serviceName eq 'Virtual Machines' and currencyCode eq 'USD' and ({names})"


def live_requests() -> list[PageRequest]:
    """The first API page of the GPU sizes in the mapping CSV; later pages follow NextPageLink."""
    query = urlencode(
        {"api-version": API_VERSION, "$filter": odata_filter(provider_instance_types(PROVIDER))},
        safe="$',()",
        quote_via=quote,
    )
    return [PageRequest(url=f"{API_URL}?{query}", kind="json", combine=True)]


def next_page_request(request: PageRequest, body: Any) -> PageRequest | None:
    """The request for ``NextPageLink`` of a page just fetched (None on the last page)."""
    link = body.get("NextPageLink") if isinstance(body, dict) else None
    if not isinstance(link, str) or not link.startswith(("https://", "http://")):
        return None
    return request.model_copy(update={"url": link})


def parse(content: bytes, observed_on: dt.date | None = None) -> ParseResult:
    """Offers of every GPU-size meter in the page(s); ``observed_on`` is not read."""
    sink = OfferSink(PROVIDER)
    pages = json_pages(content, sink)
    items: list[Any] = []
    tracker_rows: list[dict[str, Any]] = []
    structured = False
    for _url, body in pages:
        if isinstance(body, dict) and isinstance(body.get("Items"), list):
            structured = True
            items.extend(body["Items"])
        elif isinstance(body, list) and body and all(_looks_like_meter(item) for item in body):
            structured = True  # the items alone, as trackers store the response
            items.extend(body)
            sink.note("price items without the API response's 'Items' envelope")
        elif (
            isinstance(body, list)
            and body
            and all(_looks_like_tracker_row(item) for item in body)
            and any(_gpu_family(clean_text(item.get("skuName"))) for item in body)
        ):
            structured = True  # a tracker's renamed rows, some of them GPU (N-family) sizes
            tracker_rows.extend(body)
            sink.note(TRACKER_ROWS_NOTE)
    if not structured:
        raise StructureMissing(PROVIDER, "no Items list in the Retail Prices API response")
    for item in items:
        sink.report.rows_seen += 1
        _emit(item, sink)
    for row in tracker_rows:
        sink.report.rows_seen += 1
        _emit_tracker_row(row, sink)
    return sink.result()


def _looks_like_meter(item: Any) -> bool:
    return isinstance(item, dict) and "armSkuName" in item and "retailPrice" in item


def _looks_like_tracker_row(item: Any) -> bool:
    """A Retail Prices item as a tracker renamed it: ``skuName``, ``productName``, ``pricePerHour``."""
    return isinstance(item, dict) and all(k in item for k in ("skuName", "productName", "pricePerHour"))


def _gpu_family(sku: str) -> bool:
    """An N-family size ("NC40adsH100v5", "Standard_ND96isr_H100_v5", "NV36ads A10 v5"): Azure's
    GPU-accelerated sizes are the N family; D, E, L, M... sizes carry no GPU."""
    return re.match(r"(?i)^(?:standard_)?n[a-z]", sku) is not None


def _size_key(name: str) -> str:
    return name_key(re.sub(r"(?i)^standard_", "", name))


def _size_by_name(sku: str) -> InstanceType | None:
    """The mapping row of a size written as the tracker kept it: "ND96isrH100v5", "NC40adsH100v5",
    "Standard_NC24ads_A100_v4" (compared by letters and digits, without "Standard_"), or under
    one of the other names the CSV's ``price_name`` gives the size ("ND96asr_A100_v4", as
    Microsoft's size page names Standard_ND96asr_v4; "ND96amsA100v4", a meter of the one-size
    NDamsr A100 v4 series)."""
    return _sizes_by_key().get(_size_key(sku))


@functools.cache
def _sizes_by_key() -> dict[str, InstanceType]:
    """Every mapped size under the key of its name and of each of its other names."""
    by_key: dict[str, InstanceType] = {}
    for size in provider_instance_types(PROVIDER):
        row = lookup(PROVIDER, size)
        if row is not None:
            for name in (size, *row.price_names):
                by_key.setdefault(_size_key(name), row)
    return by_key


def _emit_tracker_row(row: dict[str, Any], sink: OfferSink) -> None:
    sku = clean_text(row.get("skuName"))
    product = clean_text(row.get("productName")).lower()
    region = clean_text(row.get("region")) or None
    raw = " | ".join(clean_text(row.get(k)) for k in ("skuName", "region", "productName", "pricePerHour"))
    if _WINDOWS_RX.search(product) or "dedicated host" in product:
        return  # the Windows licence price; a whole host, not a VM
    if not sku:
        sink.reject(raw, "row without skuName")
        return
    suffix = re.search(r"\s+(spot|low priority)$", sku, re.I)
    if suffix and suffix.group(1).lower() == "low priority":
        return  # the retired batch tier
    tier = "spot" if suffix else "on_demand"
    size = sku[: suffix.start()] if suffix else sku
    currency = clean_text(row.get("currency")) or "USD"
    unit = clean_text(row.get("unitOfMeasure"))
    if currency != "USD" or (unit and unit.lower() != "1 hour"):
        sink.reject(raw, f"not USD per hour: {currency} per {unit or '1 Hour'}")
        return
    value = row.get("pricePerHour")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > MAX_VM_HOUR_USD:
        sink.report.unpriced_rows += 1  # a reservation's whole-term price, its term not kept
        return
    price = offered_price(sink, raw, value)
    if price is None:
        return
    mapped = _size_by_name(size)
    if mapped is None and not _gpu_family(size):
        return  # a CPU size the tracker's name filter let through ("L48s v2" for "L4")
    if mapped is None:
        sink.note_unknown_gpu(size)
        sink.reject(raw, unmapped_reason(size, round_price(price), "VM-hour"))
        return
    add_instance_offer(sink, raw, mapped, usd_per_instance_hour=price, region=region, tier=tier)


def _tier(item: dict[str, Any]) -> tuple[str, int | None] | str:
    """(tier, commitment months), or why the meter is not a GPU price we keep."""
    kind = clean_text(item.get("type"))
    meter = clean_text(item.get("meterName"))
    if kind == "Reservation":
        match = _TERM_RX.match(clean_text(item.get("reservationTerm")))
        if not match:
            return f"reservation term {item.get('reservationTerm')!r} not understood"
        return "reserved", 12 * int(match.group(1))
    if kind == "DevTestConsumption":
        return "skip"
    if kind != "Consumption":
        return f"price type {kind!r} not understood"
    if meter.lower().endswith("low priority"):
        return "skip"
    return ("spot", None) if meter.lower().endswith("spot") else ("on_demand", None)


def _retail_price(value: Any, *, term_priced: bool) -> Decimal | None:
    """``retailPrice``: a reservation's is the whole term's price (hundreds of thousands of
    dollars for an 8-GPU VM), beyond what a page's hourly price may be, so it is read as a
    plain JSON number; an hourly price goes through the shared price reader and its bounds."""
    if not term_priced:
        return positive_price(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"not a reservation price: {value!r}")
    if value < 0:
        raise ValueError(f"negative price: {value!r}")
    return Decimal(str(value)) if value > 0 else None


def _emit(item: Any, sink: OfferSink) -> None:
    if not isinstance(item, dict):
        sink.reject(clean_text(json.dumps(item))[:200], "item is not an object")
        return
    size = clean_text(item.get("armSkuName"))
    region = clean_text(item.get("armRegionName")) or None
    raw = " | ".join(
        clean_text(item.get(k)) for k in ("armSkuName", "armRegionName", "meterName", "type", "retailPrice")
    )
    if not size:
        sink.reject(raw, "item without armSkuName")
        return
    if _WINDOWS_RX.search(clean_text(item.get("productName"))):
        return  # the Windows licence price of the same VM
    tier = _tier(item)
    if tier == "skip":
        return
    if isinstance(tier, str):
        sink.reject(raw, tier)
        return
    currency = clean_text(item.get("currencyCode")) or "USD"
    if currency != "USD":
        sink.reject(raw, f"currency {currency}, not USD")
        return
    unit = clean_text(item.get("unitOfMeasure"))
    if unit and unit.lower() != "1 hour":
        sink.reject(raw, f"unit {unit!r}, not '1 Hour'")
        return
    try:
        price = _retail_price(item.get("retailPrice"), term_priced=tier[1] is not None)
    except ValueError as exc:
        sink.reject(raw, str(exc))
        return
    if price is None:
        sink.report.unpriced_rows += 1
        return
    tier_name, months = tier
    if months is not None:  # a reservation is priced for its whole term
        price = price / Decimal(HOURS_PER_YEAR * months // 12)
    mapped = lookup(PROVIDER, size)
    if mapped is None:  # no known GPU count: quarantined, never one GPU at the VM's price
        sink.note_unknown_gpu(size)
        sink.reject(raw, unmapped_reason(size, round_price(price), "VM-hour"))
        return
    gpu, gpu_raw, count, vram = mapped.gpu, mapped.gpu_raw, mapped.gpu_count, mapped.vram_gb
    if gpu == "unknown":
        sink.note_unknown_gpu(gpu_raw)
    common: dict[str, Any] = dict(gpu=gpu, gpu_raw=gpu_raw, gpu_count=count, vram_gb=vram, region=region)
    sink.add(
        raw,
        tier=tier_name,
        commitment_months=months,
        usd_per_gpu_hour=price / count,
        usd_per_instance_hour=price,
        sku=size,
        **common,
    )
    if tier_name == "on_demand":
        for plan in item.get("savingsPlan") or []:
            _emit_savings_plan(plan, raw, size, count, common, sink)


def _emit_savings_plan(
    plan: Any, raw: str, size: str, count: int, common: dict[str, Any], sink: OfferSink
) -> None:
    term = _TERM_RX.match(clean_text(plan.get("term"))) if isinstance(plan, dict) else None
    plan_raw = f"{raw} | savingsPlan {plan!r}"[:300]
    if term is None:
        sink.reject(plan_raw, "savings plan without a '1 Year'/'3 Years' term")
        return
    price = offered_price(sink, plan_raw, plan.get("retailPrice"))
    if price is None:
        return
    sink.add(
        plan_raw,
        tier="reserved",
        commitment_months=12 * int(term.group(1)),
        usd_per_gpu_hour=price / count,
        usd_per_instance_hour=price,
        sku=f"{size} (savings plan)",
        **common,
    )
