"""Oracle Cloud (OCI): the public price list API (``apexapps.oracle.com/pls/apex/cetools/api/v1/
products/``), key-less JSON.

Response: ``{"items": [{"partNumber": "B98415", "displayName": "Compute - GPU - H100",
"metricName": "GPU Per Hour", "serviceCategory": "Compute - GPU", "currencyCodeLocalizations":
[{"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": 10}]}]}, ...],
"hasMore": false, ...}``, newer lists prefixing names with "OCI - ". The live fetch asks for USD
(``?currencyCode=USD``) and follows the ORDS ``links`` ``rel: next`` while ``hasMore`` is true
(up to :data:`MAX_PAGES`), stored as one combined document.

GPU items are those whose display name reads "Compute - GPU - <name>" (or whose metric is "GPU
Per Hour"); their ``PAY_AS_YOU_GO`` USD value is a per-GPU-hour price. The list names GPUs, not
shapes: the mapping CSV's ``price_name`` says which bare-metal shape (``BM.GPU.H100.8``: 8
GPUs) each name prices. A GPU name the CSV does not map is ``unknown`` (count 1, its display
name raw). OCI states one price for all commercial regions, so ``region`` is None. Preemptible
capacity (50 % of on-demand per OCI's documentation) is not in the list and is not derived.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from gpuprice.scrapers.instance_types import lookup_price_name
from gpuprice.scrapers.json_pages import json_pages, positive_price
from gpuprice.scrapers.offer import ParseResult, PriceUnit, StructureMissing, Tier
from gpuprice.scrapers.offer_sink import OfferSink
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.parsing import clean_text

PROVIDER = "oci"
PARSER_VERSION = "oci/1"
PRICING_URL = "https://www.oracle.com/cloud/compute/pricing/"
UNLABELED_TIER: Tier | None = None
PRICE_UNIT: PriceUnit = "gpu_hour"
API_URL = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD"
MAX_PAGES = 10
_GPU_NAME_RX = re.compile(r"^(?:OCI\s*-\s*)?Compute\s*-\s*GPU\s*-\s*(?P<gpu>.+)$", re.I)


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
    for item in items:
        if not isinstance(item, dict):
            continue
        name = clean_text(item.get("displayName"))
        match = _GPU_NAME_RX.match(name)
        if not match and clean_text(item.get("metricName")).lower() != "gpu per hour":
            continue  # not a GPU product (CPU, storage, network...)
        sink.report.rows_seen += 1
        _emit(item, name, sink)
    if sink.report.rows_seen == 0:
        raise StructureMissing(PROVIDER, "no 'Compute - GPU' items in the price list")
    return sink.result()


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
        price = positive_price(_usd_pay_as_you_go(item))
    except ValueError as exc:
        sink.reject(raw, str(exc))
        return
    if price is None:
        sink.report.unpriced_rows += 1
        return
    row = lookup_price_name(PROVIDER, name)
    if row is None:
        sink.note_unknown_gpu(name)
        gpu, gpu_raw, count, vram, sku = "unknown", name, 1, None, part or name
    else:
        gpu, gpu_raw, count, vram, sku = row.gpu, row.gpu_raw, row.gpu_count, row.vram_gb, row.instance_type
    sink.add(
        raw,
        gpu=gpu,
        gpu_raw=gpu_raw,
        gpu_count=count,
        vram_gb=vram,
        usd_per_gpu_hour=price,
        usd_per_instance_hour=price * count,
        sku=sku,
    )
