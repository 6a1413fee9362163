"""GENERATED all-region recordings of the three hyperscalers, for volume tests and the bench.

No recording of AWS's, Azure's or Oracle's price documents for every region is available
offline, so ``scrapers/generated_archive/`` holds documents *generated* here, in the structures
the parsers read and the real captures in ``../shared/realpages`` show (the files named in
``scrapers/generated_archive/README.md``; nothing of them is copied): per region the row counts
and document sizes of the live sources, with prices that are **synthetic**:

- AWS: one ``meteredUnitMap`` on-demand document per commercial region in
  ``scrapers.providers.aws.REGIONS`` (``{"regions": {"<location>": {"<compound key>":
  {"Instance Type", "price", ...}}}}``), each with :data:`AWS_CPU_ROWS_PER_REGION` CPU rows beside
  the GPU types (a real region's document lists ~700 instance types; the parser skips CPUs), then
  the spot feed (JSONP, every region) and the Spot Instance Advisor buckets;
- Azure: the Retail Prices API's items of the mapped GPU sizes in every region that has them,
  eight meters per size and region (Linux and Windows consumption with the preview API's
  ``savingsPlan``, Spot and Low Priority of both, 1- and 3-year reservations), 1,000 items per
  page linked by ``NextPageLink``;
- OCI: the price list (region-less: Oracle states one price for all commercial regions), the
  mapped GPU items plus :data:`OCI_OTHER_ITEMS` non-GPU products.

Prices: the cited us-east-1 / eastus / OCI list price of the sample archive where it has one
(``scrapers/sample_archive``), else the geometric middle of the catalog's plausible band; other
regions multiply it by a fixed factor per region group (:data:`AWS_REGION_FACTORS`,
:data:`AZURE_REGION_FACTORS`) and a hash jitter of +-3 %. A type or size is offered in a region
by a hash draw (the newest families in fewer regions); us-east-1 and eastus have every one.
Everything is a pure function of the date, so the committed files can be checked against a
fresh generation (``python -m bench.all_region_archive [--check]``).

Over ~400 lines: the three hyperscalers' generated documents share the region draw, the price
rule and the writer; split per provider, the figure's row counts would no longer be read in one place.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from gpuprice.models.catalog import plausible_price_band
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE
from gpuprice.scrapers.instance_types import instance_types
from gpuprice.scrapers.multipage import VERSION_1_FORMAT as COMBINED_FORMAT  # parsed bodies: version 1
from gpuprice.scrapers.providers import aws, azure, oci

GENERATED_ARCHIVE = SAMPLE_ARCHIVE.with_name("generated_archive")
GENERATED_DATE = dt.date(2026, 10, 6)  # the sample archive's newest date
PROVIDERS = ("aws", "azure", "oci")

AWS_CPU_ROWS_PER_REGION = 600
OCI_OTHER_ITEMS = 600
AZURE_PAGE_ITEMS = 1000
# Regional price factors against us-east-1 / eastus, by region-name prefix (first match wins).
AWS_REGION_FACTORS: tuple[tuple[str, float], ...] = (
    ("us-east-1", 1.0),
    ("us-east-2", 1.0),
    ("us-west-2", 1.0),
    ("us-", 1.12),
    ("ca-", 1.1),
    ("eu-north-1", 1.07),
    ("eu-", 1.15),
    ("ap-", 1.3),
    ("sa-", 1.6),
    ("", 1.25),
)
AZURE_REGION_FACTORS: tuple[tuple[str, float], ...] = (
    ("eastus", 1.0),
    ("westus", 1.0),
    ("southcentralus", 1.0),
    ("centralus", 1.05),
    ("canada", 1.1),
    ("brazil", 1.55),
    ("europe", 1.12),
    ("uk", 1.15),
    ("france", 1.15),
    ("germany", 1.15),
    ("sweden", 1.08),
    ("norway", 1.15),
    ("switzerland", 1.2),
    ("japan", 1.3),
    ("korea", 1.3),
    ("australia", 1.3),
    ("india", 1.25),
    ("asia", 1.3),
    ("", 1.25),
)
# Azure regions (armRegionName, location as the API writes it).
AZURE_REGIONS: tuple[tuple[str, str], ...] = (
    ("eastus", "US East"),
    ("eastus2", "US East 2"),
    ("westus", "US West"),
    ("westus2", "US West 2"),
    ("westus3", "US West 3"),
    ("centralus", "US Central"),
    ("northcentralus", "US North Central"),
    ("southcentralus", "US South Central"),
    ("westcentralus", "US West Central"),
    ("canadacentral", "CA Central"),
    ("canadaeast", "CA East"),
    ("brazilsouth", "BR South"),
    ("northeurope", "EU North"),
    ("westeurope", "EU West"),
    ("uksouth", "UK South"),
    ("ukwest", "UK West"),
    ("francecentral", "FR Central"),
    ("germanywestcentral", "DE West Central"),
    ("switzerlandnorth", "CH North"),
    ("norwayeast", "NO East"),
    ("swedencentral", "SE Central"),
    ("polandcentral", "PL Central"),
    ("italynorth", "IT North"),
    ("spaincentral", "ES Central"),
    ("eastasia", "AP East"),
    ("southeastasia", "AP Southeast"),
    ("japaneast", "JA East"),
    ("japanwest", "JA West"),
    ("koreacentral", "KR Central"),
    ("koreasouth", "KR South"),
    ("centralindia", "IN Central"),
    ("southindia", "IN South"),
    ("westindia", "IN West"),
    ("australiaeast", "AU East"),
    ("australiasoutheast", "AU Southeast"),
    ("australiacentral", "AU Central"),
    ("southafricanorth", "ZA North"),
    ("uaenorth", "AE North"),
    ("qatarcentral", "QA Central"),
    ("israelcentral", "IL Central"),
    ("mexicocentral", "MX Central"),
    ("newzealandnorth", "NZ North"),
    ("indonesiacentral", "ID Central"),
    ("malaysiawest", "MY West"),
)
_AWS_CPU_FAMILIES = (
    "m7i",
    "m7a",
    "m6i",
    "m6a",
    "m5",
    "c7i",
    "c7a",
    "c6i",
    "c6a",
    "c5",
    "r7i",
    "r7a",
    "r6i",
    "r5",
)
_AWS_CPU_SIZES = (
    "large",
    "xlarge",
    "2xlarge",
    "4xlarge",
    "8xlarge",
    "12xlarge",
    "16xlarge",
    "24xlarge",
    "48xlarge",
)
_SPOT_BUCKETS = ("<5%", "5-10%", "10-15%", "15-20%", ">20%")


def _unit(*parts: object) -> float:
    """A stable draw in [0, 1) from the parts (the same on every machine and Python)."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _factor(table: tuple[tuple[str, float], ...], region: str, *key: object) -> float:
    base = next(f for prefix, f in table if region.startswith(prefix) or prefix in region)
    return base if base == 1.0 else base * (0.97 + 0.06 * _unit("jitter", region, *key))


def _band_middle(slug: str) -> float:
    low, high = plausible_price_band(slug)
    return math.sqrt(low * high)


def _cited_prices(provider: str) -> dict[str, float]:
    """Instance-hour list prices of the sample archive's newest page (us-east-1 / eastus / OCI)."""
    module = {"aws": aws, "azure": azure, "oci": oci}[provider]
    page = max((SAMPLE_ARCHIVE / provider).glob("*.json"))
    result = module.parse(page.read_bytes())
    home = {"aws": "us-east-1", "azure": "eastus", "oci": None}[provider]
    return {
        o.sku: float(o.usd_per_instance_hour or 0)
        for o in result.offers
        if o.tier == "on_demand" and o.region == home and o.usd_per_instance_hour
    }


def _offered(provider: str, name: str, region: str, home: str) -> bool:
    if region == home:
        return True
    newest = any(mark in name for mark in ("p6", "p5en", "p5e.", "GB200", "GB300", "H200", "MI300X"))
    return _unit("offered", provider, name, region) < (0.35 if newest else 0.6)


def _types(provider: str) -> list[tuple[str, str, int]]:
    """(instance type, catalog slug, GPU count) of the provider's mapped types, in CSV order."""
    return [(t.instance_type, t.gpu, t.gpu_count) for t in instance_types() if t.provider == provider]


def _base_price(cited: dict[str, float], name: str, slug: str, count: int, provider: str) -> float:
    """The cited price of this type; else the cited per-GPU price of the same GPU at the same
    provider (p5.4xlarge from p5.48xlarge) times the count; else the catalog band's middle times
    the provider's premium over it (the median of cited price / band middle)."""
    if name in cited:
        return cited[name]
    slugs = _slugs(provider)
    per_gpu = [
        price / slugs[other][1] for other, price in cited.items() if slugs.get(other, ("",))[0] == slug
    ]
    if per_gpu:
        return min(per_gpu) * count
    ratios = sorted(
        price / slugs[o][1] / _band_middle(slugs[o][0])
        for o, price in cited.items()
        if o in slugs and slugs[o][0] != "unknown"
    )
    premium = ratios[len(ratios) // 2] if ratios else 1.0
    return _band_middle(slug if slug != "unknown" else "b200") * premium * count


def _slugs(provider: str) -> dict[str, tuple[str, int]]:
    return {t.instance_type: (t.gpu, t.gpu_count) for t in instance_types() if t.provider == provider}


def _price_text(value: float) -> str:
    return f"{value:.10f}"


def aws_document(day: dt.date = GENERATED_DATE) -> dict[str, Any]:
    cited = _cited_prices("aws")
    pages: list[dict[str, Any]] = []
    spot_regions: list[dict[str, Any]] = []
    advisor: dict[str, Any] = {}
    for location, region in aws.REGIONS.items():
        rows: dict[str, Any] = {}
        sizes: list[dict[str, Any]] = []
        for name, slug, count in _types("aws"):
            if not _offered("aws", name, region, "us-east-1"):
                continue
            price = _base_price(cited, name, slug, count, "aws") * _factor(AWS_REGION_FACTORS, region, name)
            rows[f"{name} {location} Linux"] = _aws_row(name, location, price, "GPU instance", day)
            spot = price * (0.3 + 0.4 * _unit("spot", name, region, day))
            sizes.append(
                {
                    "size": name,
                    "valueColumns": [
                        {"name": "linux", "prices": {"USD": f"{spot:.4f}"}},
                        {"name": "mswin", "prices": {"USD": f"{spot * 1.15:.4f}"}},
                    ],
                }
            )
            bucket = int(_unit("bucket", name, region, day) * len(_SPOT_BUCKETS))
            advisor.setdefault(region, {"Linux": {}})["Linux"][name] = {"s": 50 + 10 * bucket, "r": bucket}
        for i in range(AWS_CPU_ROWS_PER_REGION):
            family = _AWS_CPU_FAMILIES[i % len(_AWS_CPU_FAMILIES)]
            size = _AWS_CPU_SIZES[(i // len(_AWS_CPU_FAMILIES)) % len(_AWS_CPU_SIZES)]
            generation = i // (len(_AWS_CPU_FAMILIES) * len(_AWS_CPU_SIZES))
            name = f"{family}{'' if generation == 0 else chr(ord('a') + generation)}.{size}"
            price = 0.05 * (1 + _AWS_CPU_SIZES.index(size)) ** 1.7 * _factor(AWS_REGION_FACTORS, region, name)
            rows[f"{name} {location} Linux"] = _aws_row(name, location, price, "General purpose", day)
        pages.append(
            {
                "url": aws.ON_DEMAND_URL.format(location=quote(location)),
                "status": 200,
                "error": None,
                "body": {
                    "manifest": {
                        "serviceId": "ec2",
                        "currencyCode": "USD",
                        "source": "ec2-ondemand-without-sec-sel",
                        "generated": f"gpuprice bench.all_region_archive for {day}",
                    },
                    "regions": {location: rows},
                },
            }
        )
        spot_regions.append({"region": region, "instanceTypes": [{"type": "gpuCurrentGen", "sizes": sizes}]})
    spot_feed = {
        "vers": 0.01,
        "config": {
            "rate": "perhr",
            "valueColumns": ["linux", "mswin"],
            "currencies": ["USD"],
            "regions": spot_regions,
        },
    }
    pages.append(
        {
            "url": aws.SPOT_URL,
            "status": 200,
            "error": None,
            "body": f"callback({json.dumps(spot_feed, separators=(',', ':'))});",
        }
    )
    ranges = [
        {"index": i, "label": label, "dots": i, "max": 5 * (i + 1)} for i, label in enumerate(_SPOT_BUCKETS)
    ]
    pages.append(
        {
            "url": aws.SPOT_ADVISOR_URL,
            "status": 200,
            "error": None,
            "body": {"ranges": ranges, "spot_advisor": advisor},
        }
    )
    return {"format": COMBINED_FORMAT, "pages": pages}


def _aws_row(name: str, location: str, price: float, family: str, day: dt.date) -> dict[str, str]:
    code = hashlib.sha256(f"{name}|{location}".encode()).hexdigest().upper()
    return {
        "rateCode": f"{code[:16]}.JRTCKXETXF.6YS6EN2CT7",
        "price": _price_text(price),
        "Location": location,
        "Instance Family": family,
        "Instance Type": name,
        "plc:OperatingSystem": "Linux",
        "Operating System": "Linux",
        "Pre Installed S/W": "NA",
        "License Model": "No License required",
        "Effective Date": day.isoformat(),
    }


def azure_document(day: dt.date = GENERATED_DATE) -> dict[str, Any]:
    cited = _cited_prices("azure")
    items: list[dict[str, Any]] = []
    for name, slug, count in _types("azure"):
        for region, location in AZURE_REGIONS:
            if not _offered("azure", name, region, "eastus"):
                continue
            hourly = _base_price(cited, name, slug, count, "azure") * _factor(
                AZURE_REGION_FACTORS, region, name
            )
            items.extend(_azure_items(name, region, location, hourly, day))
    first = azure.live_requests()[0].url
    pages = []
    for n, start in enumerate(range(0, len(items), AZURE_PAGE_ITEMS)):
        chunk = items[start : start + AZURE_PAGE_ITEMS]
        more = start + AZURE_PAGE_ITEMS < len(items)
        url = first if n == 0 else f"{first}&$skip={start}"
        body = {
            "BillingCurrency": "USD",
            "CustomerEntityId": "Default",
            "CustomerEntityType": "Retail",
            "Items": chunk,
            "NextPageLink": f"{first}&$skip={start + AZURE_PAGE_ITEMS}" if more else None,
            "Count": len(chunk),
        }
        pages.append({"url": url, "status": 200, "error": None, "body": body})
    return {"format": COMBINED_FORMAT, "pages": pages}


def _azure_items(size: str, region: str, location: str, hourly: float, day: dt.date) -> list[dict[str, Any]]:
    short = size.removeprefix("Standard_").replace("_", "")
    series = f"Virtual Machines {short} Series"
    spot = hourly * (0.15 + 0.25 * _unit("spot", size, region, day))

    def item(
        price: float, meter: str, product: str, kind: str = "Consumption", **extra: Any
    ) -> dict[str, Any]:
        return {
            "currencyCode": "USD",
            "tierMinimumUnits": 0.0,
            "retailPrice": round(price, 6 if kind == "Consumption" else 1),
            "unitPrice": round(price, 6 if kind == "Consumption" else 1),
            "armRegionName": region,
            "location": location,
            "effectiveStartDate": "2026-01-01T00:00:00Z",
            "meterId": hashlib.sha256(f"{size}|{region}|{meter}|{kind}".encode()).hexdigest()[:36],
            "meterName": meter,
            "productName": product,
            "skuName": meter,
            "serviceName": "Virtual Machines",
            "serviceFamily": "Compute",
            "unitOfMeasure": "1 Hour",
            "type": kind,
            "isPrimaryMeterRegion": True,
            "armSkuName": size,
            **extra,
        }

    plans = [
        {"unitPrice": round(hourly * 0.55, 6), "retailPrice": round(hourly * 0.55, 6), "term": "3 Years"},
        {"unitPrice": round(hourly * 0.8, 6), "retailPrice": round(hourly * 0.8, 6), "term": "1 Year"},
    ]
    return [
        item(hourly, short, series, savingsPlan=plans),
        item(hourly * 1.04, short, f"{series} Windows"),
        item(spot, f"{short} Spot", series),
        item(spot * 1.04, f"{short} Spot", f"{series} Windows"),
        item(hourly * 0.2, f"{short} Low Priority", series),
        item(hourly * 0.21, f"{short} Low Priority", f"{series} Windows"),
        item(hourly * 0.6 * 8760, short, series, "Reservation", reservationTerm="1 Year"),
        item(hourly * 0.4 * 8760 * 3, short, series, "Reservation", reservationTerm="3 Years"),
    ]


def oci_document(day: dt.date = GENERATED_DATE) -> dict[str, Any]:
    cited = _cited_prices("oci")
    items: list[dict[str, Any]] = []
    for t in instance_types():
        if t.provider != "oci":
            continue
        per_gpu = (_base_price(cited, t.instance_type, t.gpu, t.gpu_count, "oci")) / t.gpu_count
        items.append(
            _oci_item(
                t.part_number or f"GEN-{t.instance_type}",
                t.price_name,
                "GPU Per Hour",
                "Compute - GPU",
                per_gpu,
            )
        )
    for i in range(OCI_OTHER_ITEMS):
        items.append(
            _oci_item(
                f"GEN-{i:04d}",
                f"Compute - Standard - Generated shape {i} - OCPU",
                "OCPU Per Hour",
                "Compute - Virtual Machine",
                0.01 + (i % 50) / 1000,
            )
        )
    body = {
        "lastUpdated": f"{day.isoformat()}T00:00:00.000Z",
        "items": items,
        "hasMore": False,
        "limit": len(items),
        "offset": 0,
        "count": len(items),
        "links": [],
    }
    return {
        "format": COMBINED_FORMAT,
        "pages": [{"url": oci.API_URL, "status": 200, "error": None, "body": body}],
    }


def _oci_item(part: str, name: str, metric: str, category: str, price: float) -> dict[str, Any]:
    return {
        "partNumber": part,
        "displayName": name,
        "metricName": metric,
        "serviceCategory": category,
        "currencyCodeLocalizations": [
            {"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": round(price, 4)}]}
        ],
    }


DOCUMENTS = {"aws": aws_document, "azure": azure_document, "oci": oci_document}


def document_bytes(provider: str, day: dt.date = GENERATED_DATE) -> bytes:
    return json.dumps(DOCUMENTS[provider](day), separators=(",", ":"), sort_keys=True).encode()


def write_archive(folder: Path = GENERATED_ARCHIVE, day: dt.date = GENERATED_DATE) -> list[Path]:
    """``<folder>/<provider>/<day>.json.gz`` for the three providers (gzip without a timestamp)."""
    written = []
    for provider in PROVIDERS:
        path = folder / provider / f"{day.isoformat()}.json.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(document_bytes(provider, day), compresslevel=9, mtime=0))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.all_region_archive", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when the committed files differ from a fresh generation"
    )
    args = parser.parse_args(argv)
    if args.check:
        stale = [
            p
            for p in PROVIDERS
            if gzip.decompress((GENERATED_ARCHIVE / p / f"{GENERATED_DATE}.json.gz").read_bytes())
            != document_bytes(p)
        ]
        print("stale: " + ", ".join(stale) if stale else "up to date")
        return 1 if stale else 0
    for path in write_archive():
        print(f"{path} {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
