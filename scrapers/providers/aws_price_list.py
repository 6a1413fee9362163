"""AWS's Price List API documents, read into priced rows for :mod:`gpuprice.scrapers.providers.aws`.

Two public forms carry the same product and term records (AWS Price List API, "offer files"):

- the offer file of a service and region
  (``pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/<region>/index.json``):
  ``{"offerCode": "AmazonEC2", "publicationDate", "products": {sku: {"productFamily",
  "attributes": {"instanceType", "location", "regionCode", "operatingSystem", "tenancy",
  "preInstalledSw", "capacitystatus", "operation", ...}}}, "terms": {"OnDemand": {sku: {term code:
  {"effectiveDate", "priceDimensions": {rate code: {"unit": "Hrs", "pricePerUnit": {"USD":
  "32.7726000000"}}}, "termAttributes": {}}}}, "Reserved": {...}}}`` (a real cut of one, kept by
  opencost/opencost ``pkg/cloud/aws/testdata/pricing-us-east-1.json`` @9dcbc978, 2024-05-28);
- a page of the query API's ``GetProducts`` (``aws pricing get-products --service-code
  AmazonEC2``): ``{"FormatVersion": "aws_v1", "PriceList": [...]}``, each item one product with
  its terms, ``{"product": {"sku", "productFamily", "attributes"}, "serviceCode": "AmazonEC2",
  "terms": {"OnDemand": {term code: {...}}}}``, written as a JSON string (as the API returns it)
  or as an object.

An instance type is listed once per operating system, tenancy, preinstalled software, capacity
status and operation. The price a person reads on the on-demand page is the Linux, shared-tenancy
row without preinstalled software on used capacity, operation ``RunInstances``; every other row
(Windows, RHEL, dedicated hosts, capacity reservations, Capacity Blocks ``RunInstances:CB``
listed at $0) is another product, counted, not priced. Reserved terms: the standard offering class
without upfront payment, whose hourly rate is the whole price, becomes ``reserved`` with 12 or 36
months; partial and all upfront terms (a fee beside or instead of the rate) and convertible ones
are counted, not priced. A price in another currency (the China regions' CNY) is no USD offer.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from gpuprice.bounded_load import load_json
from gpuprice.scrapers.json_pages import positive_price
from gpuprice.scrapers.parsing import clean_text

# The plain on-demand product of an instance type (attribute -> the value it must have when present).
_PLAIN_PRODUCT = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
    "operation": "RunInstances",
}
_LEASE_YEARS = re.compile(r"^\s*(\d+)\s*yr\b", re.I)


@dataclass(frozen=True)
class PriceListRow:
    """One priced term of a plain Linux instance product."""

    instance_type: str
    location: str  # the ``location`` attribute ("US East (N. Virginia)")
    region_code: str | None  # the ``regionCode`` attribute, where the document has it
    tier: str  # "on_demand" or "reserved"
    commitment_months: int | None
    usd_per_instance_hour: str  # as written ("32.7726000000")
    effective: dt.date | None  # the term's ``effectiveDate``


@dataclass
class PriceListRead:
    rows: list[PriceListRow] = field(default_factory=list)
    # why GPU-family products or terms gave no row, and how many ("Windows", "partial upfront", ...)
    skipped: Counter[str] = field(default_factory=Counter)


def is_price_list(body: Any) -> bool:
    """An offer file or a GetProducts page."""
    if not isinstance(body, dict):
        return False
    offer_file = isinstance(body.get("products"), dict) and isinstance(body.get("terms"), dict)
    return offer_file or isinstance(body.get("PriceList"), list)


def read_price_list(body: dict[str, Any], is_gpu_type: Callable[[str], bool]) -> PriceListRead:
    """The priced rows of every product whose instance type passes ``is_gpu_type``."""
    read = PriceListRead()
    for product, terms in _products(body):
        attributes = product.get("attributes")
        if not isinstance(attributes, dict):
            continue
        instance_type = clean_text(attributes.get("instanceType"))
        if not instance_type or not is_gpu_type(instance_type):
            continue
        other = next(
            (
                f"{name} {attributes[name]}"
                for name, plain in _PLAIN_PRODUCT.items()
                if name in attributes and clean_text(attributes[name]) != plain
            ),
            None,
        )
        if other is not None:
            read.skipped[f"not the plain Linux product ({other})"] += 1
            continue
        for tier, term in _terms(terms):
            _read_term(read, instance_type, attributes, tier, term)
    return read


def _products(body: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(product, {term type: {term code: term}}) of an offer file or a GetProducts page."""
    if isinstance(body.get("products"), dict):
        all_terms = _object(body.get("terms"))
        for sku, product in body["products"].items():
            if isinstance(product, dict):
                yield (
                    product,
                    {
                        kind: (by_sku or {}).get(sku) or {}
                        for kind, by_sku in all_terms.items()
                        if isinstance(by_sku, dict)
                    },
                )
        return
    for item in body.get("PriceList") or []:
        if isinstance(item, str):
            try:
                item = load_json(item)
            except ValueError:
                continue
        if isinstance(item, dict) and isinstance(item.get("product"), dict):
            terms = item.get("terms")
            yield item["product"], terms if isinstance(terms, dict) else {}


def _terms(terms: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for kind, tier in (("OnDemand", "on_demand"), ("Reserved", "reserved")):
        by_code = terms.get(kind)
        for term in (by_code or {}).values() if isinstance(by_code, dict) else ():
            if isinstance(term, dict):
                yield tier, term


def _read_term(
    read: PriceListRead, instance_type: str, attributes: dict[str, Any], tier: str, term: dict[str, Any]
) -> None:
    months: int | None = None
    if tier == "reserved":
        lease = _object(term.get("termAttributes"))
        years = _LEASE_YEARS.match(clean_text(lease.get("LeaseContractLength")))
        purchase = clean_text(lease.get("PurchaseOption")).lower()
        offering = clean_text(lease.get("OfferingClass")).lower()
        if years is None:
            read.skipped["reserved term without a lease length"] += 1
            return
        if purchase != "no upfront":
            read.skipped[f"reserved {purchase or 'unstated'} (an upfront fee, not an hourly price)"] += 1
            return
        if offering and offering != "standard":
            read.skipped[f"reserved {offering} offering class"] += 1
            return
        months = 12 * int(years.group(1))
    hourly: str | None = None
    upfront = False
    dimensions = term.get("priceDimensions")
    for dimension in (dimensions or {}).values() if isinstance(dimensions, dict) else ():
        if not isinstance(dimension, dict):
            continue
        prices = _object(dimension.get("pricePerUnit"))
        unit = clean_text(dimension.get("unit")).lower()
        if unit in ("hrs", "hours", "hour"):
            hourly = prices.get("USD")
            if hourly is None and prices:
                read.skipped[f"priced in {', '.join(sorted(prices))}, not USD"] += 1
                return
        elif unit == "quantity" and _upfront_fee(prices.get("USD")):
            upfront = True
    if upfront:
        read.skipped["reserved with an upfront fee"] += 1
        return
    if hourly is None:
        read.skipped["no hourly price"] += 1
        return
    read.rows.append(
        PriceListRow(
            instance_type=instance_type,
            location=clean_text(attributes.get("location")),
            region_code=clean_text(attributes.get("regionCode")) or None,
            tier=tier,
            commitment_months=months,
            usd_per_instance_hour=str(hourly),
            effective=_date(term.get("effectiveDate")),
        )
    )


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _upfront_fee(value: Any) -> bool:
    """An upfront fee is charged (an unreadable one counts as charged: the hourly rate is then not
    known to be the whole price)."""
    try:
        return positive_price(value) is not None
    except ValueError:
        return True


def _date(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None
