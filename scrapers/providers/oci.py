"""Oracle Cloud (OCI): the public price list API (``apexapps.oracle.com/pls/apex/cetools/api/v1/
products/``), key-less JSON.

Response: ``{"items": [{"partNumber": "B98415", "displayName": "Compute - GPU - H100",
"metricName": "GPU Per Hour", "serviceCategory": "Compute - GPU", "currencyCodeLocalizations":
[{"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": 10}]}]}, ...],
"hasMore": false, ...}``, newer lists prefixing names with "OCI - ". The live fetch asks for USD
(``?currencyCode=USD``) and follows the ORDS ``links`` ``rel: next`` while ``hasMore`` is true
(up to :data:`MAX_PAGES`), stored as one combined document.

GPU items are those whose display name mentions a GPU ("Compute - GPU - H100", "Compute - Bare
Metal GPU Standard - X7", "BM.GPU.A10.64") or whose metric is "GPU Per Hour". Of those:

- Cloud@Customer items (racks Oracle installs in the customer's data centre, billed with a
  commitment; one "Resource Commit" at $0.60/GPU-h) and other "... Commit" items (VMware
  nodes under a monthly or yearly commitment) are not rentable on-demand capacity: skipped and
  named in a report note;
- items not priced per GPU-hour (a Roving Edge device per day) are skipped and noted;
- software priced per GPU-hour ("OCI - NVIDIA AI Enterprise - H100": the NVIDIA AI Enterprise
  licence, sold on top of the GPU; getcomputable/gpu-index
  tests/fixtures/observatory/oracle/products_usd.json @38e515c00ad4c186cddb1ca004f18168cfd0d223,
  lastUpdated 2026-08-14) is no GPU price: skipped and noted, never an unknown GPU;
- a "GPU Per Hour" item's ``PAY_AS_YOU_GO`` USD value is a per-GPU-hour on-demand price. The
  list names GPUs, not shapes: the mapping CSV says which bare-metal shape (``BM.GPU.H100.8``:
  8 GPUs) each item prices, matched by part number ("B98415"), else by display name (prefixes
  "OCI - " / "Oracle Cloud Infrastructure - " and doubled spaces ignored);
- an item the CSV does not map (generation labels such as "Compute - GPU - E4" or "H100T" that
  name no GPU) is quarantined with its name and price and listed in ``unknown_gpus``: which
  GPU and shape it prices is unknown, so it is never an offer. H100T, "Bare Metal / Virtual
  Machine GPU Standard - X7", "GPU Standard - V2", E3 and E4 (getcomputable/gpu-index
  @38e515c0) are GPU items by Oracle's own list (metric "GPU Per Hour", category "Compute -
  GPU"), not other products, and no Oracle document reachable offline ties them to a shape:
  they stay unknown rather than being skipped or guessed.

OCI states one price for all commercial regions, so ``region`` is None. Preemptible capacity
(50 % of on-demand per OCI's documentation) is not in the list and is not derived.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from gpuprice.scrapers.identity import Identity
from gpuprice.scrapers.instance_types import add_instance_offer, lookup_price_name
from gpuprice.scrapers.json_pages import json_pages, offered_price
from gpuprice.scrapers.offer import ParseResult, PriceUnit, StructureMissing, Tier, round_price
from gpuprice.scrapers.offer_sink import OfferSink
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.parsing import clean_text

PROVIDER = "oci"
PARSER_VERSION = "oci/3"  # 3: NVIDIA AI Enterprise licences are no GPU price
PRICING_URL = "https://www.oracle.com/cloud/compute/pricing/"
UNLABELED_TIER: Tier | None = None
PRICE_UNIT: PriceUnit = "gpu_hour"
IDENTITY = Identity(
    PROVIDER,
    domains=("oracle.com", "oraclecloud.com"),
    brands=(r"\bOracle\b",),
    markers=(r"\bpartNumber\b", r"\bcurrencyCodeLocalizations\b"),  # the price list API's fields
)
API_URL = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD"
MAX_PAGES = 10
_GPU_WORD_RX = re.compile(r"(?<![A-Za-z])GPU(?![A-Za-z])", re.I)
_CLOUD_AT_CUSTOMER_RX = re.compile(r"cloud\s*@\s*customer", re.I)
_COMMIT_RX = re.compile(r"\bcommit\b", re.I)
_SOFTWARE_RX = re.compile(r"\bAI Enterprise\b", re.I)
_GPU_HOUR_METRIC = "gpu per hour"


def live_requests() -> list[PageRequest]:
    return [PageRequest(url=API_URL, kind="json", combine=True)]


def next_page_request(request: PageRequest, body: Any) -> PageRequest | None:
    """ORDS paging: the ``next`` link while ``hasMore`` is true."""
    if not isinstance(body, dict) or body.get("hasMore") is not True:
        return None
    for link in body.get("links") or []:
        if (
            isinstance(link, dict)
            and link.get("rel") == "next"
            and str(link.get("href", "")).startswith("https://")
        ):
            return request.model_copy(update={"url": link["href"]})
    return None


def parse(content: bytes, observed_on: dt.date | None = None) -> ParseResult:
    sink = OfferSink(PROVIDER)
    items: list[Any] = []
    structured = False
    for _url, body in json_pages(content, sink):
        if isinstance(body, dict) and isinstance(body.get("items"), list):
            structured = True
            items.extend(body["items"])
    if not structured:
        raise StructureMissing(PROVIDER, "no items list in the price list API response")
    skipped: dict[str, list[str]] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        name = clean_text(item.get("displayName"))
        metric = clean_text(item.get("metricName"))
        if not _GPU_WORD_RX.search(name) and metric.lower() != _GPU_HOUR_METRIC:
            continue  # not a GPU product (CPU, storage, network...)
        sink.report.rows_seen += 1
        why = _not_on_demand(item, name, metric)
        if why:
            skipped.setdefault(why, []).append(clean_text(item.get("partNumber")) or name)
            continue
        _emit(item, name, sink)
    if sink.report.rows_seen == 0:
        raise StructureMissing(PROVIDER, "no 'Compute - GPU' items in the price list")
    for why, parts in skipped.items():
        sink.note(f"{why}: {', '.join(parts)}")
    return sink.result()


def _not_on_demand(item: dict[str, Any], name: str, metric: str) -> str:
    """Why a GPU item is not an on-demand GPU-hour price ("" when it is one)."""
    if _CLOUD_AT_CUSTOMER_RX.search(name) or _CLOUD_AT_CUSTOMER_RX.search(
        clean_text(item.get("serviceCategory"))
    ):
        return "Cloud@Customer items skipped (on-premises racks under a commitment, not rentable on demand)"
    if _SOFTWARE_RX.search(name):
        return "software licences priced per GPU-hour skipped (NVIDIA AI Enterprise, on top of the GPU)"
    if _COMMIT_RX.search(name):
        return "commit items skipped (prices under a usage commitment, not on-demand)"
    if metric.lower() != _GPU_HOUR_METRIC:
        return "GPU items not priced per GPU-hour skipped"
    return ""


def _usd_pay_as_you_go(item: dict[str, Any]) -> Any:
    for localization in item.get("currencyCodeLocalizations") or []:
        if isinstance(localization, dict) and localization.get("currencyCode") == "USD":
            for price in localization.get("prices") or []:
                if isinstance(price, dict) and price.get("model") == "PAY_AS_YOU_GO":
                    return price.get("value")
            return None
    raise ValueError("no USD price")


def _emit(item: dict[str, Any], name: str, sink: OfferSink) -> None:
    part = clean_text(item.get("partNumber"))
    raw = f"{part} | {name} | {clean_text(json.dumps(item.get('currencyCodeLocalizations')))[:120]}"
    try:
        value = _usd_pay_as_you_go(item)
    except ValueError as exc:
        sink.reject(raw, str(exc))
        return
    price = offered_price(sink, raw, value)
    if price is None:
        return
    row = lookup_price_name(PROVIDER, name, part)
    if row is None:  # which GPU and shape: unknown, so no offer (never one GPU of a guessed shape)
        sink.note_unknown_gpu(name)
        sink.reject(
            raw,
            f"{name} is not in the shape table (scrapers/data/instance_types.csv): "
            f"GPU and shape unknown, ${round_price(price)} per GPU-hour not stored as an offer",
        )
        return
    add_instance_offer(sink, raw, row, usd_per_gpu_hour=price)
