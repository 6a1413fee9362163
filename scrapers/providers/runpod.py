"""Runpod: GraphQL ``gpuTypes`` JSON (primary) and the runpod.io/pricing HTML page (fallback).

Structure as documented in provider-pages.md (Runpod section). The GraphQL response is
``{"data": {"gpuTypes": [...]}}``; the bare ``gpuTypes`` list (as public trackers store it, e.g.
Jumbo2020/gpu_prices ``gpu_prices.json``) reads the same, with a note. All Runpod prices are per GPU-hour
for a one-GPU pod, so every offer has ``gpu_count`` 1 and ``usd_per_instance_hour`` None.

From one ``gpuType`` the parser emits, when the price is a positive number:

- ``securePrice`` / ``communityPrice``: on-demand list prices (secure cloud vs community cloud);
- ``secureSpotPrice`` / ``communitySpotPrice``: spot (interruptible) prices;
- ``oneWeekPrice`` / ``oneMonthPrice`` / ``threeMonthPrice`` / ``sixMonthPrice``: savings-plan
  commitments, tier ``reserved`` with ``commitment_months`` 0 / 1 / 3 / 6. One week is less than
  a month, so it is recorded as 0 months (0 means "one week" for Runpod: no other term is shorter);
- ``lowestPrice.uninterruptablePrice``: the cheapest machine available right now, kept beside the
  list price with ``price_basis`` "lowest_now". Our query asks ``lowestPrice`` for secure cloud and
  ``communityLowestPrice`` (an alias) for community cloud; a ``lowestPrice`` from another query
  (no per-cloud alias in the response) is the cheapest machine of either cloud: community when
  the GPU is community-only or the price is under the secure list price, else secure. ``stockStatus`` High/Medium/Low -> available True, null -> False (no stock), field not
  queried -> None; ``availableGpuCounts`` (the pod sizes rentable now) -> ``capacity``, the
  largest of them (0 for an empty list, None when not queried). Prices are for one GPU
  (``gpuCount: 1``).

The HTML page without price rows or embedded gpuTypes (as archived 2026-08-10) still carries
schema.org ``Product`` data (JSON-LD): one Product per GPU whose offers are named "Community
Cloud" and "Secure Cloud", each an on-demand price per GPU-hour.

A capture cut inside a price row (its opening ``<a class="gpu-pricing-row">`` gone) leaves that row's
name, spec tags and price element as loose siblings: they are read as one row (``_rows_cut_open``).

A null or 0 price means "not offered": no offer and no error. ``clusterPrice`` (Instant
Clusters, sold separately) and ``minimumBidPrice`` (a bid floor, not a price) are not offers.

Over 400 lines: the GraphQL and the HTML fallback both end in one price rule (``_add_pod_price``)
over the fields listed above; split apart, a reader would lose that shared path.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from bs4 import BeautifulSoup, SoupStrainer, Tag

from gpuprice.bounded_load import load_json
from gpuprice.scrapers.gpu_names import UNKNOWN, normalize_gpu
from gpuprice.scrapers.gunzip import MAX_PAGE_BYTES
from gpuprice.scrapers.identity import Identity
from gpuprice.scrapers.json_pages import positive_price
from gpuprice.scrapers.next_data import flight_payload, flight_rows
from gpuprice.scrapers.offer import ParseReport, ParseResult, PriceUnit, StructureMissing, Tier
from gpuprice.scrapers.offer_sink import FROM_PRICE_NOTE, OfferSink
from gpuprice.scrapers.page_input import page_text
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.parsing import clean_text, parse_number, parse_price

PROVIDER = "runpod"
PARSER_VERSION = "runpod/10"  # 10: a row a capture cut open (loose name, tags and prices) is read
PRICING_URL = "https://www.runpod.io/pricing"
# Secure and community cloud are separate markets: a bare price names neither.
UNLABELED_TIER: Tier | None = None
PRICE_UNIT: PriceUnit = "gpu_hour"
IDENTITY = Identity(
    PROVIDER,
    domains=("runpod.io", "runpod.ai"),
    brands=(r"(?i)\brunpod\b",),
    markers=(
        r"\bsecurePrice\b",
        r"\bcommunityPrice\b",
        r"\blowestPrice\b",
        r"\bgpuTypes\b",
    ),  # the GraphQL API's fields
)
_MAX_BODY_BYTES = MAX_PAGE_BYTES  # a module attribute so a test can lower the gzip cap
GRAPHQL_URL = "https://api.runpod.io/graphql"

_LOWEST_FIELDS = "uninterruptablePrice minimumBidPrice minVcpu minMemory stockStatus availableGpuCounts"
GPU_TYPES_QUERY = (
    "query GpuTypes { gpuTypes { "
    "id displayName manufacturer memoryInGb maxGpuCount secureCloud communityCloud "
    "securePrice communityPrice secureSpotPrice communitySpotPrice "
    "oneWeekPrice oneMonthPrice threeMonthPrice sixMonthPrice clusterPrice "
    f"lowestPrice(input: {{gpuCount: 1, secureCloud: true}}) {{ {_LOWEST_FIELDS} }} "
    f"communityLowestPrice: lowestPrice(input: {{gpuCount: 1, secureCloud: false}}) {{ {_LOWEST_FIELDS} }} "
    "} }"
)

# (field, tier, community, commitment_months); savings plans are sold on secure cloud.
_LIST_PRICE_FIELDS: tuple[tuple[str, str, bool, int | None], ...] = (
    ("securePrice", "on_demand", False, None),
    ("communityPrice", "on_demand", True, None),
    ("secureSpotPrice", "spot", False, None),
    ("communitySpotPrice", "spot", True, None),
    ("oneWeekPrice", "reserved", False, 0),
    ("oneMonthPrice", "reserved", False, 1),
    ("threeMonthPrice", "reserved", False, 3),
    ("sixMonthPrice", "reserved", False, 6),
)
# lowestPrice alias -> community flag
_LOWEST_PRICE_FIELDS: tuple[tuple[str, bool], ...] = (
    ("lowestPrice", False),
    ("secureLowestPrice", False),
    ("communityLowestPrice", True),
)
_IN_STOCK = {"high", "medium", "low"}
# A response without the flags (a tracker's field subset) cannot tell a real price from the value
# Runpod leaves in the price field of a cloud that does not carry the GPU (often 0.5).
NO_CLOUD_FLAGS_NOTE = (
    "secureCloud/communityCloud not in the response: a price of a cloud that does not carry the GPU "
    "cannot be told from a placeholder"
)

# HTML fallback: price data attributes, mapped by name (two generations, see module docstring).
_ATTR_RX = re.compile(
    r"^data-(?P<cloud>secure|community)(?:[-_]?cloud)?(?P<spot>[-_]?spot)?(?:[-_]?price)?$", re.I
)
_PRICE_LIKE_ATTR_RX = re.compile(r"^data-.*(price|spot|secure|community|cost)", re.I)
_ROW_CLASS_RX = re.compile(r"(?:^|\s)gpu-pricing-row(?:\s|$)")
_TAG_CLASS_RX = re.compile(r"(?:^|[-_])(?:tag|pill|chip|spec)$", re.I)
# Spec tags read "80 GB VRAM" or "VRAM: 80 GB" (value or label first).
_VRAM_RX = re.compile(r"(\d+(?:\.\d+)?)\s*GB\s*VRAM|\bVRAM\W{0,3}(\d+(?:\.\d+)?)\s*GB", re.I)
_RAM_RX = re.compile(
    r"(\d+(?:\.\d+)?)\s*GB\s*(?:system\s*)?RAM\b|(?<![V\w])RAM\W{0,3}(\d+(?:\.\d+)?)\s*GB", re.I
)
_VCPU_RX = re.compile(r"(\d+(?:\.\d+)?)\s*vCPUs?\b|\bvCPUs?\W{0,3}(\d+(?:\.\d+)?)", re.I)


def live_requests() -> list[PageRequest]:
    """GraphQL POST (no key needed) first; the public HTML pricing page as fallback."""
    return [
        PageRequest(
            url=GRAPHQL_URL,
            method="POST",
            json_body={"query": GPU_TYPES_QUERY},
            headers={"Content-Type": "application/json"},
            kind="json",
        ),
        PageRequest(url=PRICING_URL, kind="html", fallback=True),
    ]


def parse(content: bytes, observed_on: dt.date | None = None) -> ParseResult:
    """Parse a GraphQL response or the HTML pricing page (sniffed from the content).

    ``observed_on`` is accepted for the common interface; Runpod publishes no scheduled prices.
    """
    sink = OfferSink(PROVIDER)
    text = page_text(content, sink.report, max_bytes=_MAX_BODY_BYTES)
    if text.lstrip()[:1] in ("{", "["):
        _parse_graphql(text, sink)
    else:
        _parse_html(text, sink)
    return sink.result()


# --- prices ------------------------------------------------------------------------------------


def _add_pod_price(
    sink: OfferSink, raw: str, gpu: str, gpu_raw: str, vram: float | None, price: Decimal, **fields: Any
) -> None:
    """One Runpod price: per GPU-hour of a one-GPU pod, so ``gpu_count`` 1 and no instance price."""
    sink.add(raw, gpu=gpu, gpu_raw=gpu_raw, gpu_count=1, vram_gb=vram, usd_per_gpu_hour=price, **fields)


# --- GraphQL -----------------------------------------------------------------------------------


def _gpu_types(text: str, report: ParseReport) -> list[Any]:
    try:
        payload = load_json(text)
    except ValueError as exc:
        raise StructureMissing(PROVIDER, f"invalid JSON ({exc})") from None
    if isinstance(payload, dict) and isinstance(payload.get("data"), dict):
        gpu_types = payload["data"].get("gpuTypes")
    elif isinstance(payload, dict):
        gpu_types = payload.get("gpuTypes")
    elif isinstance(payload, list) and payload and all(_looks_like_gpu_type(item) for item in payload):
        # the gpuTypes list alone, as trackers store the response without its {"data": ...} envelope
        gpu_types = payload
        report.notes.append("gpuTypes list without the GraphQL data envelope")
    else:
        gpu_types = None
    error = _first_graphql_error(payload)
    if not isinstance(gpu_types, list) or not gpu_types:
        detail = f" (GraphQL error: {error})" if error else ""
        raise StructureMissing(PROVIDER, f"no data.gpuTypes list in the JSON response{detail}")
    if error:  # partial data: a field failed but the list came back
        report.notes.append(f"GraphQL error alongside data: {error}")
    return gpu_types


def _gpu_type_name(item: Any) -> str:
    """A gpuType's identity: its ``id``, else its ``displayName`` (a query may ask only for that,
    e.g. Jumbo2020/gpu_prices ``gpu_prices.json`` @beb9df28: displayName, secureCloud, securePrice,
    nodeGroupDatacenters)."""
    return clean_text(item.get("id")) or clean_text(item.get("displayName")) if isinstance(item, dict) else ""


def _looks_like_gpu_type(item: Any) -> bool:
    """A gpuTypes entry: an object with an ``id`` or ``displayName`` and at least one Runpod price field."""
    return (
        isinstance(item, dict)
        and bool(_gpu_type_name(item))
        and (
            any(field[0] in item for field in _LIST_PRICE_FIELDS)
            or any(field[0] in item for field in _LOWEST_PRICE_FIELDS)
        )
    )


def _first_graphql_error(payload: Any) -> str:
    errors = payload.get("errors") if isinstance(payload, dict) else None
    if not isinstance(errors, list) or not errors:
        return ""
    first = errors[0].get("message") if isinstance(errors[0], dict) else errors[0]
    return clean_text(first)[:120]


def _parse_graphql(text: str, sink: OfferSink) -> None:
    report = sink.report
    gpu_types = _gpu_types(text, report)
    # our query asks lowestPrice per cloud (secure, and communityLowestPrice); another query may not
    clouds_asked = any(
        isinstance(i, dict) and any(field in i for field, _ in _LOWEST_PRICE_FIELDS if field != "lowestPrice")
        for i in gpu_types
    )
    if not any(isinstance(i, dict) and ("secureCloud" in i or "communityCloud" in i) for i in gpu_types):
        sink.note(NO_CLOUD_FLAGS_NOTE)
    for item in gpu_types:
        report.rows_seen += 1
        if not isinstance(item, dict) or not _gpu_type_name(item):
            sink.reject(clean_text(json.dumps(item))[:200], "gpuType without an id or displayName")
            continue
        before = len(sink.offers) + len(report.rejected)
        _emit_gpu_type(item, sink, clouds_asked=clouds_asked)
        if len(sink.offers) + len(report.rejected) == before:
            report.unpriced_rows += 1  # e.g. the placeholder "unknown" type, or a retired GPU


def _emit_gpu_type(item: dict[str, Any], sink: OfferSink, *, clouds_asked: bool) -> None:
    sku = _gpu_type_name(item)
    gpu_raw = clean_text(item.get("displayName")) or sku
    vram = parse_number(item.get("memoryInGb")) if item.get("memoryInGb") is not None else None
    vram = vram or None  # 0 GB is the API's "unknown"
    offered_in = {False: item.get("secureCloud"), True: item.get("communityCloud")}
    gpu: str | None = None

    def emit(field: str, value: Any, *, community: bool, **extra: Any) -> None:
        nonlocal gpu
        raw = f"{sku} | {field}={value!r}"
        try:
            price = positive_price(value)
        except ValueError as exc:
            sink.reject(raw, str(exc))
            return
        if price is None:
            return
        if offered_in[community] is False:  # the API says this cloud does not carry the GPU
            sink.report.notes.append(
                f"{sku}: {field} ignored, {'community' if community else 'secure'}Cloud is false"
            )
            return
        if gpu is None:
            gpu = _slug_by_id_first(sink, sku, gpu_raw, vram)
        _add_pod_price(sink, raw, gpu, gpu_raw, vram, price, community=community, **extra)

    for field, tier, community, months in _LIST_PRICE_FIELDS:
        if field in item:
            emit(field, item[field], community=community, tier=tier, commitment_months=months, sku=sku)

    for field, community in _LOWEST_PRICE_FIELDS:
        lowest = item.get(field)
        if not isinstance(lowest, dict):
            continue
        if field == "lowestPrice":
            community = _lowest_price_is_community(item, lowest, clouds_asked=clouds_asked)
        status = lowest.get("stockStatus", ...)
        available = None if status is ... else clean_text(status).lower() in _IN_STOCK
        counts = lowest.get("availableGpuCounts")
        capacity = (
            max((c for c in counts if isinstance(c, int) and not isinstance(c, bool) and c >= 0), default=0)
            if isinstance(counts, list)
            else None
        )
        emit(
            f"{field}.uninterruptablePrice",
            lowest.get("uninterruptablePrice"),
            community=community,
            tier="on_demand",
            sku=sku,
            price_basis="lowest_now",
            available=available,
            capacity=capacity,
            vcpus=_spec(lowest.get("minVcpu")),
            ram_gb=_spec(lowest.get("minMemory")),
        )


def _lowest_price_is_community(item: dict[str, Any], lowest: dict[str, Any], *, clouds_asked: bool) -> bool:
    """Whose machine a plain ``lowestPrice`` is: a community-only GPU's is community; in a response
    of our query (which asks each cloud apart) it is secure cloud's; from a query that named no cloud
    it is the cheapest machine of either, a community one when it is under the secure list price
    (secure machines rent at that price: getcomputable/gpu-index runpod/gputypes.json @5cf4f703,
    where every such lowestPrice equals the communityPrice)."""
    if item.get("communityCloud") is False:
        return False
    if item.get("secureCloud") is False:
        return True
    if clouds_asked:
        return False
    try:
        cheapest = positive_price(lowest.get("uninterruptablePrice"))
        secure = positive_price(item.get("securePrice"))
    except ValueError:
        return False
    return cheapest is not None and secure is not None and cheapest < secure


def _slug_by_id_first(sink: OfferSink, type_id: str, display_name: str, vram: float | None) -> str:
    """The catalog slug of a gpuType: its ``id`` ("NVIDIA A100 80GB PCIe") names the part more fully
    than its displayName ("A100 80GB" on the 2023 page), so it is tried first; unknown GPUs are
    listed under the displayName."""
    slug = normalize_gpu(type_id, provider=PROVIDER, vram_gb=vram)
    return slug if slug != UNKNOWN else sink.gpu_slug(display_name, vram, type_id)


def _spec(value: Any) -> float | None:
    number = parse_number(value) if value is not None and not isinstance(value, bool) else None
    return number or None


# --- HTML fallback -----------------------------------------------------------------------------


def _parse_html(text: str, sink: OfferSink) -> None:
    # Only the price rows matter; the strainer keeps lxml from building the rest of the page.
    # The strainer sees the raw class attribute ("gpu-pricing-row is-featured"): match the token.
    strainer = SoupStrainer(class_=_ROW_CLASS_RX)
    soup = BeautifulSoup(text, "lxml", parse_only=strainer)
    rows = [
        row
        for row in soup.find_all(class_="gpu-pricing-row")
        if not row.find_parent(class_="gpu-pricing-row")
    ]
    if not rows:
        rows = _rows_by_price_attributes(BeautifulSoup(text, "lxml"))
    if not rows:
        embedded = _embedded_gpu_types(text)
        if embedded:
            sink.report.notes.append("gpuTypes read from the page's Next.js data")
            _parse_graphql(json.dumps({"data": {"gpuTypes": embedded}}), sink)
            return
        products = _json_ld_gpu_products(text)
        if products:
            sink.report.notes.append("prices read from the page's schema.org Product data (JSON-LD)")
            for product in products:
                sink.report.rows_seen += 1
                _emit_json_ld_product(product, sink)
            return
    if not rows:
        raise StructureMissing(
            PROVIDER, "no .gpu-pricing-row elements on the pricing page (login/captcha page or layout change)"
        )
    named_rows: list[tuple[Tag, str]] = [(row, "") for row in rows]
    in_rows = sum(
        1 for r in rows for tag in (r, *r.find_all(True)) for name in tag.attrs if _ATTR_RX.match(name)
    )
    if _price_attribute_count(text) > in_rows:  # price attributes outside every row
        named_rows[:0] = _rows_cut_open(BeautifulSoup(text, "lxml"))
    priced_rows = 0
    for row, name in named_rows:
        sink.report.rows_seen += 1
        prices = dict(_price_attributes(row, sink.report))
        if prices:
            priced_rows += 1
        _emit_html_row(row, prices, sink, name=name)
    if not priced_rows:
        raise StructureMissing(
            PROVIDER, "no price data attributes (data-secure/data-community) on .gpu-pricing-row"
        )


_PRICE_ATTR_IN_TEXT_RX = re.compile(
    r"\sdata-(?:secure|community)[-_]?(?:cloud)?[-_]?(?:spot)?[-_]?(?:price)?\s*=", re.I
)


def _price_attribute_count(text: str) -> int:
    return len(_PRICE_ATTR_IN_TEXT_RX.findall(text))


def _rows_cut_open(soup: BeautifulSoup) -> list[tuple[Tag, str]]:
    """Rows whose opening tag a capture's cut removed (henryzhangpku/gpu-price-index
    tests/fixtures/backfill/runpod_20250909131230.html starts inside the H200 row, at its name): the
    price element is outside every ``.gpu-pricing-row``, its cells (name, spec tags, prices) left as
    loose siblings. Each becomes a row of those siblings, named by the first that is neither a spec
    tag nor a price."""
    found: list[tuple[Tag, str]] = []
    for element in soup.find_all(lambda tag: any(_ATTR_RX.match(name) for name in tag.attrs)):
        if element.find_parent(class_=_ROW_CLASS_RX) or any(
            element is cell for row, _ in found for cell in row
        ):
            continue
        top = element
        while isinstance(top.parent, Tag) and top.parent.name not in ("body", "html", "[document]"):
            if top.parent.find(class_=_ROW_CLASS_RX):
                break
            top = top.parent
        cells = [top]
        for sibling in top.find_previous_siblings(True):
            if _has_row_or_price(sibling):
                break
            cells.insert(0, sibling)
        name = next(
            (
                clean_text(cell.get_text(" "))
                for cell in cells
                if not cell.find_all(class_=_TAG_CLASS_RX)
                and not _has_row_or_price(cell)
                and "$" not in cell.get_text()
            ),
            "",
        )
        row = soup.new_tag("div")
        for cell in cells:
            row.append(cell.extract())
        found.append((row, name))
    return found


def _has_row_or_price(tag: Tag) -> bool:
    if _ROW_CLASS_RX.search(" ".join(tag.get("class") or [])):
        return True
    return (
        any(any(_ATTR_RX.match(name) for name in t.attrs) for t in (tag, *tag.find_all(True)))
        or tag.find(class_=_ROW_CLASS_RX) is not None
    )


def _rows_by_price_attributes(soup: BeautifulSoup) -> list[Tag]:
    """Rows after a redesign renamed ``.gpu-pricing-row``: the outermost elements carrying the
    price data attributes, widened to the ancestor that holds the ``?gpu=`` link when the
    attributes sit on an inner element."""
    rows: list[Tag] = []
    for element in soup.find_all(lambda tag: any(_ATTR_RX.match(name) for name in tag.attrs)):
        row = element
        for parent in list(element.parents)[:3]:
            if row.find("a", href=_is_gpu_link) or (row.name == "a" and _is_gpu_link(row.get("href"))):
                break
            if isinstance(parent, Tag) and parent.name not in ("body", "html", "[document]"):
                row = parent
        if not any(row is r or any(p is r for p in row.parents) for r in rows):
            rows.append(row)
    return rows


def _embedded_gpu_types(text: str) -> list[Any]:
    """The ``gpuTypes`` list of a Next.js page (``__NEXT_DATA__`` or App Router flight rows), under
    that key or any other: the 2023 page kept it as ``props.pageProps.data``, a list of
    ``{"__typename": "GpuType", ...}`` (henryzhangpku/gpu-price-index
    tests/fixtures/backfill/runpod_20230929070808.html)."""
    soup = BeautifulSoup(text, "lxml", parse_only=SoupStrainer("script"))
    scripts = [script.get_text() for script in soup.find_all("script")]
    candidates: list[Any] = list(flight_rows(flight_payload(scripts)))
    for code in scripts:
        try:
            candidates.append(json.loads(code))
        except json.JSONDecodeError:
            continue
    stack = candidates
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found = node.get("gpuTypes")
            if isinstance(found, list) and found and all(isinstance(item, dict) for item in found):
                return found
            stack.extend(node.values())
        elif isinstance(node, list):
            if node and all(_looks_like_gpu_type(item) for item in node):
                return node
            stack.extend(node)
    return []


# "H100 SXM GPU on Runpod": the product's name around the GPU's
_PRODUCT_NAME_RX = re.compile(r"^(?P<gpu>.+?)\s+GPU(?:\s+on\s+Runpod)?$", re.I)
# an offer's cloud by its name: "Community Cloud" / "Secure Cloud"
_OFFER_CLOUD_RX = re.compile(r"\b(?P<cloud>community|secure)\s+cloud\b", re.I)


def _json_ld_gpu_products(text: str) -> list[dict[str, Any]]:
    """The schema.org ``Product`` entries of the page's JSON-LD scripts that name a GPU and carry
    offers (the pricing page as archived 2026-08-10: henryzhangpku/gpu-price-index
    tests/fixtures/backfill/runpod_20260810082317.html, one Product per GPU, its AggregateOffer's
    offers named "Community Cloud" and "Secure Cloud")."""
    soup = BeautifulSoup(
        text, "lxml", parse_only=SoupStrainer("script", attrs={"type": "application/ld+json"})
    )
    products: list[dict[str, Any]] = []
    for script in soup.find_all("script"):
        try:
            data = json.loads(script.get_text())
        except json.JSONDecodeError:
            continue
        stack = [data]
        while stack:
            node = stack.pop(0)
            if isinstance(node, list):
                stack.extend(node)
            elif isinstance(node, dict):
                kind = node.get("@type")
                if (
                    kind == "Product"
                    and node.get("offers")
                    and _PRODUCT_NAME_RX.match(clean_text(node.get("name")))
                ):
                    products.append(node)
                else:
                    stack.extend(node.get("@graph") or [])
    return products


def _emit_json_ld_product(product: dict[str, Any], sink: OfferSink) -> None:
    """One GPU's offers: each named offer's price is the on-demand price per GPU-hour of its cloud."""
    name = clean_text(product.get("name"))
    named = _PRODUCT_NAME_RX.match(name)
    gpu_raw = clean_text(named["gpu"]) if named else name
    offers = product.get("offers")
    listed = offers.get("offers") if isinstance(offers, dict) and offers.get("offers") else offers
    listed = listed if isinstance(listed, list) else [listed]
    priced = 0
    for offer in listed:
        if not isinstance(offer, dict):
            continue
        raw = f"{name} | {clean_text(offer.get('name'))} | price={offer.get('price')!r}"
        cloud = _OFFER_CLOUD_RX.search(clean_text(offer.get("name")))
        currency = clean_text(offer.get("priceCurrency")) or "USD"
        if cloud is None:
            sink.reject(raw, "offer names neither Community Cloud nor Secure Cloud")
            continue
        if currency != "USD":
            sink.reject(raw, f"currency {currency}, not USD")
            continue
        try:
            price = positive_price(offer.get("price"))
        except ValueError as exc:
            sink.reject(raw, str(exc))
            continue
        if price is None:
            continue
        priced += 1
        _add_pod_price(
            sink,
            raw,
            sink.gpu_slug(gpu_raw, None),
            gpu_raw,
            None,
            price,
            tier="on_demand",
            community=cloud["cloud"].lower() == "community",
            sku=gpu_raw,
        )
    if not priced:
        sink.report.unpriced_rows += 1


def _price_attributes(row: Tag, report: ParseReport) -> Iterator[tuple[tuple[bool, str], str]]:
    """((community, tier), 'attribute=value') for each price data attribute on or inside the row."""
    seen: set[tuple[bool, str]] = set()
    for element in (row, *row.find_all(True)):
        for name, value in element.attrs.items():
            match = _ATTR_RX.match(name)
            if match:
                key = (match["cloud"].lower() == "community", "spot" if match["spot"] else "on_demand")
                if key not in seen:
                    seen.add(key)
                    yield key, f"{name}={clean_text(value)}"
            elif _PRICE_LIKE_ATTR_RX.match(name) and name not in report.unexpected_columns:
                report.unexpected_columns.append(name)


def _emit_html_row(row: Tag, prices: dict[tuple[bool, str], str], sink: OfferSink, *, name: str = "") -> None:
    link = row if row.name == "a" and _is_gpu_link(row.get("href")) else row.find("a", href=_is_gpu_link)
    href = link.get("href") if link else None
    gpu_param = _gpu_param(href) if isinstance(href, str) else ""
    name_el = row.find(class_=re.compile("name", re.I)) or row.find(re.compile("^h[1-6]$"))
    gpu_raw = clean_text(name_el.get_text(" ")) if name_el else ""
    gpu_raw = gpu_raw or gpu_param or (clean_text(link.get_text(" ")) if link else "") or name
    tags = " | ".join(clean_text(tag.get_text(" ")) for tag in row.find_all(class_=_TAG_CLASS_RX))
    specs = tags or clean_text(row.get_text(" "))
    raw = " | ".join(part for part in (gpu_raw, tags, *prices.values()) if part)
    if not gpu_raw:
        sink.reject(raw or clean_text(row.get_text(" "))[:200], "row without a GPU name")
        return
    vram = _first_number(_VRAM_RX, specs)
    parsed: list[tuple[bool, str, Decimal, bool]] = []
    for (community, tier), attribute in prices.items():
        try:
            price = parse_price(attribute.split("=", 1)[1])
        except ValueError as exc:
            sink.reject(raw, str(exc))
            continue
        if price is not None and price.value > 0:
            parsed.append((community, tier, price.value, price.is_from))
            if price.is_from:
                sink.note(FROM_PRICE_NOTE)
    if not parsed:
        sink.report.unpriced_rows += 1
        return
    gpu = sink.gpu_slug(gpu_raw, vram, gpu_param)
    for community, tier, value, is_from in parsed:
        _add_pod_price(
            sink,
            raw,
            gpu,
            gpu_raw,
            vram,
            value,
            tier=tier,
            community=community,
            sku=gpu_param or gpu_raw,
            vcpus=_first_number(_VCPU_RX, specs),
            ram_gb=_first_number(_RAM_RX, specs),
            price_basis="from" if is_from else "list",  # "from $x": a floor, not a list price
        )


def _is_gpu_link(href: object) -> bool:
    return isinstance(href, str) and "gpu=" in href


def _gpu_param(href: str) -> str:
    values = parse_qs(urlsplit(href).query).get("gpu")
    return clean_text(unquote(values[0])) if values else ""


def _first_number(rx: re.Pattern[str], text: str) -> float | None:
    match = rx.search(text)
    return float(next(group for group in match.groups() if group)) if match else None
