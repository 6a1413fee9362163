"""Blocking data checks on each provider's parsed offers (before they replace the snapshot).

gpuhunt-style integrity rules: at least one priced offer, every price > 0 and plausible for its
GPU, unique offer keys, few unknown GPU names, and no sudden loss of half the offers. A failing
check blocks the snapshot partition, so yesterday's data stays the latest and the provider is
marked stale in ``provider_runs``.
"""


from collections import Counter
from collections.abc import Callable
from typing import Any

import dagster as dg

from pipelines.defs.scraping.assets import partition_date, record_failure
from pipelines.resources import WAREHOUSE_POOL, WarehouseResource
from scrapers.offer import PROVIDERS, ParseResult

MAX_UNKNOWN_SHARE = 0.25  # more than a quarter unknown names means the page changed its naming
MIN_KEPT_SHARE = 0.5  # losing more than half the offers overnight means a broken or partial page


def check_has_offers(result: ParseResult, previous_count: int | None) -> tuple[bool, str]:
    n = len(result.offers)
    return n > 0, f"{n} priced offers"


def check_prices_plausible(result: ParseResult, previous_count: int | None) -> tuple[bool, str]:
    from models.catalog import plausible_price_band

    bad = []
    for offer in result.offers:
        if offer.usd_per_gpu_hour <= 0:
            bad.append(f"{offer.gpu_raw} ${offer.usd_per_gpu_hour}")
            continue
        if offer.gpu == "unknown":
            continue
        low, high = plausible_price_band(offer.gpu)
        if not low <= offer.usd_per_gpu_hour <= high:
            bad.append(f"{offer.gpu_raw} ({offer.gpu}) ${offer.usd_per_gpu_hour}/GPU-h outside ${low:g}-${high:g}")
    return not bad, ("all prices plausible" if not bad else "implausible: " + "; ".join(bad[:5]))


def check_unique_keys(result: ParseResult, previous_count: int | None) -> tuple[bool, str]:
    dupes = [k for k, n in Counter(o.key for o in result.offers).items() if n > 1]
    return not dupes, ("offer keys unique" if not dupes else f"{len(dupes)} duplicate offer keys, e.g. {dupes[0]}")


def check_unknown_share(result: ParseResult, previous_count: int | None) -> tuple[bool, str]:
    n = len(result.offers)
    unknown = sum(o.gpu == "unknown" for o in result.offers)
    share = unknown / n if n else 0.0
    names = ", ".join(sorted(set(result.report.unknown_gpus))[:5])
    return share <= MAX_UNKNOWN_SHARE, f"{unknown}/{n} offers with unknown GPU ({share:.0%}){': ' + names if names else ''}"


def check_no_sudden_drop(result: ParseResult, previous_count: int | None) -> tuple[bool, str]:
    n = len(result.offers)
    if not previous_count:
        return True, f"{n} offers; no previous snapshot to compare"
    ok = n >= MIN_KEPT_SHARE * previous_count
    return ok, f"{n} offers against {previous_count} in the previous snapshot"


CHECKS: dict[str, tuple[Callable[[ParseResult, int | None], tuple[bool, str]], str]] = {
    "has_priced_offers": (check_has_offers, "At least one priced offer."),
    "prices_plausible": (check_prices_plausible, "Every price > 0 and within the plausible band of its GPU."),
    "unique_offer_keys": (check_unique_keys, "No two offers share a key."),
    "few_unknown_gpus": (check_unknown_share, f"At most {MAX_UNKNOWN_SHARE:.0%} of offers with an unknown GPU."),
    "no_sudden_drop": (check_no_sudden_drop, f"At least {MIN_KEPT_SHARE:.0%} of the previous snapshot's offers."),
}


def previous_offer_count(warehouse: WarehouseResource, provider: str, day) -> int | None:
    with warehouse.open() as con:
        row = con.execute(
            """SELECT offers FROM provider_runs
               WHERE provider = ? AND snapshot_date < ? AND status = 'success'
               ORDER BY snapshot_date DESC LIMIT 1""",
            [provider, day],
        ).fetchone()
    return int(row[0]) if row else None


def build_checks(provider: str) -> list[dg.AssetChecksDefinition]:
    asset_key = dg.AssetKey(["parsed", provider])
    specs = [
        dg.AssetCheckSpec(name=name, asset=asset_key, blocking=True, description=description)
        for name, (_, description) in CHECKS.items()
    ]

    @dg.multi_asset_check(
        specs=specs,
        name=f"{provider}_offer_checks",
        ins={"parsed": dg.AssetIn(key=asset_key)},
        pool=WAREHOUSE_POOL,
    )
    def offer_checks(context: dg.AssetCheckExecutionContext, parsed: dict[str, Any], warehouse: WarehouseResource):
        result: ParseResult = parsed["result"]
        day = partition_date(context)
        previous = previous_offer_count(warehouse, provider, day)
        failures = []
        for name, (fn, _) in CHECKS.items():
            passed, detail = fn(result, previous)
            if not passed:
                failures.append(f"{name}: {detail}")
            yield dg.AssetCheckResult(
                check_name=name, asset_key=asset_key, passed=passed, description=detail,
                metadata={"detail": detail}, severity=dg.AssetCheckSeverity.ERROR,
            )
        if failures:
            record_failure(
                warehouse, provider=provider, snapshot_date=day, source=parsed["raw"]["source"],
                error="check failed: " + "; ".join(failures), report=result.report,
                started_at=parsed["raw"].get("started_at"),
            )

    return [offer_checks]


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions(asset_checks=[c for p in PROVIDERS for c in build_checks(p)])
