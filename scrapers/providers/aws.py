"""AWS EC2: the per-region on-demand price files behind aws.amazon.com/ec2/pricing (key-less).

Live, one combined document (``scrapers/multipage.py``) of:

- per commercial region in :data:`REGIONS` (33; us-east-1's required, the others optional: a
  region that fails is noted and the rest land), ``b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/ec2/USD/
  current/ec2-ondemand-without-sec-sel/<location>/Linux/index.json``: ``{"regions":
  {"US East (N. Virginia)": {"<key>": {"Instance Type": "p5.48xlarge", "price": "55.04", ...}}}}``
  (keys are compound strings, so rows are found by their ``Instance Type`` field; the location
  name maps to the region code through :data:`REGIONS`); also as trackers keep them, several such
  documents in one object keyed by location name;
- optional: the spot price feed of the EC2 spot pricing page
  (``website.spot.ec2.aws.a2z.com/spot.json``, JSONP ``callback({...})``:
  ``config.regions[].instanceTypes[].sizes[].valueColumns[name=linux].prices.USD``);
- optional: the Spot Instance Advisor's ``spot-advisor-data.json`` (interruption frequency
  buckets ``ranges`` and ``spot_advisor.<region>.Linux.<type>.r``, the bucket index). A spot
  offer carries its bucket label ("<5%" ... ">20%") as ``interruption_bucket``; the cost model
  turns it into a preemption rate (``models/spot_risk.py``).

``gpuprice parse aws`` also reads the Price List API's offer files and ``GetProducts`` pages, as
others keep AWS's prices (:mod:`gpuprice.scrapers.providers.aws_price_list`: on-demand and
no-upfront standard reserved prices of the plain Linux product). A spot feed saved on its own is
not read: its layout (``config.regions[].instanceTypes[].sizes[]``) is also that of AWS's older
on-demand files (iconara/ec2pricing keeps both), so alone it cannot say its prices are spot; in
the live document it arrives from the spot URL.

Only instance types of the GPU families (p*, g*) are read. Prices are per instance-hour; per GPU
is the instance price over the mapping CSV's GPU count. A GPU-family type the CSV does not list
(a new generation) has no known GPU count: it is quarantined (a rejected row with its raw name and
whole-instance price) and listed in ``unknown_gpus``, never stored as one GPU at the instance's
price. The live price files carry no savings plans or reserved prices, so live AWS offers are
on-demand and spot only (reserved ones come only from a Price List document). A spot price of
"N/A" is unpriced.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from urllib.parse import quote

from gpuprice.bounded_load import load_json
from gpuprice.scrapers.identity import Identity
from gpuprice.scrapers.instance_types import add_instance_offer, lookup, unmapped_reason
from gpuprice.scrapers.json_pages import json_pages, offered_price
from gpuprice.scrapers.offer import ParseResult, PriceUnit, StructureMissing, Tier, round_price
from gpuprice.scrapers.offer_sink import OfferSink
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.parsing import clean_text
from gpuprice.scrapers.providers.aws_price_list import is_price_list, read_price_list

PROVIDER = "aws"
PARSER_VERSION = "aws/4"
PRICING_URL = "https://aws.amazon.com/ec2/pricing/on-demand/"
UNLABELED_TIER: Tier | None = None
PRICE_UNIT: PriceUnit = "instance_hour"
IDENTITY = Identity(
    PROVIDER,
    domains=("amazonaws.com", "awsstatic.com", "aws.amazon.com"),
    brands=(r"\bAmazon Web Services\b", r"\bAmazon EC2\b"),
    # the price documents' fields: metered-unit maps, Price List offer files and GetProducts
    # items (JSON strings there, so their quotes may be escaped)
    markers=(
        r'"Instance Type"',
        r"\brateCode\b",
        r"\bmeteredUnitMaps?\b",
        r'"offerCode"\s*:\s*"AmazonEC2"',
        r'(?i)\\?"servicecode\\?"\s*:\s*\\?"amazonec2',
    ),
)
ON_DEMAND_URL = (
    "https://b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/ec2/USD/current/"
    "ec2-ondemand-without-sec-sel/{location}/Linux/index.json"
)
SPOT_URL = "https://website.spot.ec2.aws.a2z.com/spot.json"
SPOT_ADVISOR_URL = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
# Location names as the price files write them -> region codes: every commercial region (GovCloud,
# China and Local Zones are sold apart). Each region's price is kept as its own offer (region is
# part of the offer key); rankings and reports use each offer's cheapest region. A location not
# listed here keeps its name as the region.
REGIONS: dict[str, str] = {
    "US East (N. Virginia)": "us-east-1",
    "US East (Ohio)": "us-east-2",
    "US West (N. California)": "us-west-1",
    "US West (Oregon)": "us-west-2",
    "Canada (Central)": "ca-central-1",
    "Canada West (Calgary)": "ca-west-1",
    "Mexico (Central)": "mx-central-1",
    "South America (Sao Paulo)": "sa-east-1",
    "Europe (Frankfurt)": "eu-central-1",
    "Europe (Zurich)": "eu-central-2",
    "Europe (Ireland)": "eu-west-1",
    "Europe (London)": "eu-west-2",
    "Europe (Paris)": "eu-west-3",
    "Europe (Milan)": "eu-south-1",
    "Europe (Spain)": "eu-south-2",
    "Europe (Stockholm)": "eu-north-1",
    "Israel (Tel Aviv)": "il-central-1",
    "Middle East (Bahrain)": "me-south-1",
    "Middle East (UAE)": "me-central-1",
    "Africa (Cape Town)": "af-south-1",
    "Asia Pacific (Mumbai)": "ap-south-1",
    "Asia Pacific (Hyderabad)": "ap-south-2",
    "Asia Pacific (Singapore)": "ap-southeast-1",
    "Asia Pacific (Sydney)": "ap-southeast-2",
    "Asia Pacific (Jakarta)": "ap-southeast-3",
    "Asia Pacific (Melbourne)": "ap-southeast-4",
    "Asia Pacific (Malaysia)": "ap-southeast-5",
    "Asia Pacific (Thailand)": "ap-southeast-7",
    "Asia Pacific (Tokyo)": "ap-northeast-1",
    "Asia Pacific (Seoul)": "ap-northeast-2",
    "Asia Pacific (Osaka)": "ap-northeast-3",
    "Asia Pacific (Hong Kong)": "ap-east-1",
    "Asia Pacific (Taipei)": "ap-east-2",
}
# The region whose document must arrive; any other region's may fail (noted, the rest land).
REQUIRED_REGION = "US East (N. Virginia)"
_GPU_FAMILY_RX = re.compile(r"^(?:p\d|g\d)[a-z0-9-]*\.\w+$")
_JSONP_RX = re.compile(r"^\s*[A-Za-z_$][\w$]*\s*\((?P<body>.*)\)\s*;?\s*$", re.S)


def live_requests() -> list[PageRequest]:
    """One on-demand file per region (only us-east-1's required), then the two optional spot
    feeds, as one combined page."""
    requests = [
        PageRequest(
            url=ON_DEMAND_URL.format(location=quote(location)),
            kind="json",
            combine=True,
            optional=location != REQUIRED_REGION,
        )
        for location in REGIONS
    ]
    requests.append(PageRequest(url=SPOT_URL, kind="json", combine=True, optional=True))
    requests.append(PageRequest(url=SPOT_ADVISOR_URL, kind="json", combine=True, optional=True))
    return requests


def parse(content: bytes, observed_on: dt.date | None = None) -> ParseResult:
    """On-demand (and spot, where the feed is in the document) offers per region."""
    sink = OfferSink(PROVIDER)
    on_demand: list[dict[str, Any]] = []
    spot: dict[str, Any] | None = None
    advisor: dict[str, Any] | None = None
    price_lists: list[dict[str, Any]] = []
    for _url, body in json_pages(content, sink):
        if isinstance(body, str):
            body = _unwrap_jsonp(body)
        if not isinstance(body, dict):
            continue
        if isinstance(body.get("regions"), dict):
            on_demand.append(body)
        elif is_price_list(body):
            price_lists.append(body)
        elif isinstance(body.get("config"), dict) and isinstance(body["config"].get("regions"), list):
            spot = body
        elif isinstance(body.get("spot_advisor"), dict):
            advisor = body
        elif documents := _documents_by_location(body):
            on_demand.extend(documents)
            sink.note("per-region price documents keyed by location name, as trackers store them")
    if not on_demand and spot is None and not price_lists:
        raise StructureMissing(
            PROVIDER,
            "no 'regions' price map (on-demand), Price List 'products'/'PriceList' or spot 'config.regions' feed",
        )
    for body in on_demand:
        _parse_on_demand(body, sink)
    for body in price_lists:
        _parse_price_list(body, sink, observed_on)
    if spot is not None:
        _parse_spot(spot, advisor, sink)
    elif advisor is not None:
        sink.note("spot advisor buckets present but no spot prices: buckets unused")
    return sink.result()


def _documents_by_location(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-region documents of a map {location name: that region's document}, the live files
    gathered under their location names (ewyluda/gpu-price-index ``tests/fixtures/aws.json``
    @d789fed5: {"US East (N. Virginia)": {"regions": {...}}, "US East (Ohio)": ...}); [] for any
    other object."""
    documents = list(body.values())
    if documents and all(isinstance(d, dict) and isinstance(d.get("regions"), dict) for d in documents):
        return documents
    return []


def _unwrap_jsonp(text: str) -> Any:
    match = _JSONP_RX.match(text)
    if not match:
        return None
    try:
        return load_json(match.group("body"))
    except ValueError:
        return None


def _region_code(location: str) -> str:
    return REGIONS.get(location, location)


def _add(sink: OfferSink, raw: str, instance_type: str, region: str, price: Any, **fields: Any) -> None:
    value = offered_price(sink, raw, price)
    if value is None:
        return
    row = lookup(PROVIDER, instance_type)
    if row is None:  # no known GPU count: quarantined, never one GPU at the instance's price
        sink.note_unknown_gpu(instance_type)
        sink.reject(raw, unmapped_reason(instance_type, round_price(value), "instance-hour"))
        return
    add_instance_offer(
        sink, raw, row, usd_per_instance_hour=value, region=region, sku=instance_type, **fields
    )


def _parse_on_demand(body: dict[str, Any], sink: OfferSink) -> None:
    for location, rows in body["regions"].items():
        if not isinstance(rows, dict):
            continue
        region = _region_code(clean_text(location))
        for row in rows.values():
            if not isinstance(row, dict):
                continue
            if "Instance Type" not in row:
                sink.note_columns(missing=["Instance Type"], unexpected=sorted(row)[:5])
                continue
            instance_type = clean_text(row.get("Instance Type"))
            if not _GPU_FAMILY_RX.match(instance_type):
                continue  # CPU families: not GPU offers
            sink.report.rows_seen += 1
            raw = f"{instance_type} | {region} | on-demand | price={row.get('price')!r}"
            system = clean_text(row.get("Operating System")) or "Linux"
            if system != "Linux":
                sink.reject(raw, f"operating system {system}, not Linux")
                continue
            _add(sink, raw, instance_type, region, row.get("price"))


def _parse_price_list(body: dict[str, Any], sink: OfferSink, observed_on: dt.date | None) -> None:
    read = read_price_list(body, lambda instance_type: bool(_GPU_FAMILY_RX.match(instance_type)))
    for why, count in sorted(read.skipped.items()):
        sink.note(f"Price List: {count} GPU-family products or terms skipped, {why}")
    for row in read.rows:
        sink.report.rows_seen += 1
        region = row.region_code or _region_code(row.location)
        term = "on-demand" if row.commitment_months is None else f"reserved {row.commitment_months} months"
        raw = f"{row.instance_type} | {region} | {term} | price={row.usd_per_instance_hour!r}"
        scheduled = row.effective if observed_on and row.effective and row.effective > observed_on else None
        _add(
            sink,
            raw,
            row.instance_type,
            region,
            row.usd_per_instance_hour,
            tier=row.tier,
            commitment_months=row.commitment_months,
            effective_from=scheduled,
        )


def _buckets(advisor: dict[str, Any] | None) -> tuple[dict[int, str], dict[str, Any]]:
    if advisor is None:
        return {}, {}
    labels = {
        r["index"]: clean_text(r.get("label"))
        for r in advisor.get("ranges", [])
        if isinstance(r, dict) and isinstance(r.get("index"), int)
    }
    regions = advisor.get("spot_advisor")
    return labels, regions if isinstance(regions, dict) else {}


def _bucket(labels: dict[int, str], regions: dict[str, Any], region: str, instance_type: str) -> str | None:
    entry = (
        (regions.get(region) or {}).get("Linux", {}).get(instance_type)
        if isinstance(regions.get(region), dict)
        else None
    )
    index = entry.get("r") if isinstance(entry, dict) else None
    return labels.get(index) if isinstance(index, int) else None


def _parse_spot(spot: dict[str, Any], advisor: dict[str, Any] | None, sink: OfferSink) -> None:
    labels, advisor_regions = _buckets(advisor)
    for region_entry in spot["config"]["regions"]:
        if not isinstance(region_entry, dict):
            continue
        region = clean_text(region_entry.get("region"))
        for family in region_entry.get("instanceTypes") or []:
            for size in (family.get("sizes") or []) if isinstance(family, dict) else []:
                if not isinstance(size, dict):
                    continue
                instance_type = clean_text(size.get("size"))
                if not _GPU_FAMILY_RX.match(instance_type):
                    continue
                sink.report.rows_seen += 1
                linux = next(
                    (
                        v
                        for v in size.get("valueColumns") or []
                        if isinstance(v, dict) and v.get("name") == "linux"
                    ),
                    None,
                )
                price = (linux or {}).get("prices", {}).get("USD") if isinstance(linux, dict) else None
                raw = f"{instance_type} | {region} | spot | price={price!r}"
                if isinstance(price, str) and clean_text(price).upper().startswith("N/A"):
                    sink.report.unpriced_rows += 1
                    continue
                _add(
                    sink,
                    raw,
                    instance_type,
                    region,
                    price,
                    tier="spot",
                    interruption_bucket=_bucket(labels, advisor_regions, region, instance_type),
                )
