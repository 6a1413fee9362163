"""Blocking data checks on each provider's parsed offers (before they replace the snapshot).

The checks are declared on ``parsed/parsed_<provider>`` and evaluated inside it, on the offers it
just parsed, so no second copy of the page is loaded.

gpuhunt-style integrity rules: at least one priced offer, every price > 0 and plausible for its
GPU, unique offer keys, few unknown GPU names, and no sudden loss of half the offers. A failing
check blocks the snapshot partition, so yesterday's data stays the latest and the provider is
marked stale in ``provider_runs``.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import dagster as dg

from gpuprice.pipelines.asset_keys import provider_asset_key
from gpuprice.pipelines.defs.scraping.connections import step_connection
from gpuprice.pipelines.resources import WarehouseResource
from gpuprice.scrapers.offer import ParseResult

MAX_UNKNOWN_SHARE = (
    1 / 3
)  # a third unknown means the page changed its naming (Runpod lists ~10 % consumer cards we do not catalog)
MIN_KEPT_SHARE = 0.5  # losing more than half the offers overnight means a broken or partial page


def check_has_offers(result: ParseResult, previous_count: int | None) -> tuple[bool, str]:
    n = len(result.offers)
    return n > 0, f"{n} priced offers"


def check_prices_plausible(result: ParseResult, previous_count: int | None) -> tuple[bool, str]:
    from gpuprice.models.catalog import plausible_price_band

    bad = []
    for offer in result.offers:
        if offer.usd_per_gpu_hour <= 0:
            bad.append(f"{offer.gpu_raw} ${offer.usd_per_gpu_hour}")
            continue
        low, high = plausible_price_band(offer.gpu)
        if not low <= offer.usd_per_gpu_hour <= high:
            bad.append(
                f"{offer.gpu_raw} ({offer.gpu}) ${offer.usd_per_gpu_hour}/GPU-h outside ${low:g}-${high:g}"
            )
    return not bad, ("all prices plausible" if not bad else "implausible: " + "; ".join(bad[:5]))


def check_unique_keys(result: ParseResult, previous_count: int | None) -> tuple[bool, str]:
    dupes = [k for k, n in Counter(o.key for o in result.offers).items() if n > 1]
    return not dupes, (
        "offer keys unique" if not dupes else f"{len(dupes)} duplicate offer keys, e.g. {dupes[0]}"
    )


def check_unknown_share(result: ParseResult, previous_count: int | None) -> tuple[bool, str]:
    n = len(result.offers)
    unknown = sum(o.gpu == "unknown" for o in result.offers)
    share = unknown / n if n else 0.0
    names = ", ".join(sorted(set(result.report.unknown_gpus))[:5])
    return (
        share <= MAX_UNKNOWN_SHARE,
        f"{unknown}/{n} offers with unknown GPU ({share:.0%}){': ' + names if names else ''}",
    )


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
    "few_unknown_gpus": (
        check_unknown_share,
        f"At most {MAX_UNKNOWN_SHARE:.0%} of offers with an unknown GPU.",
    ),
    "no_sudden_drop": (
        check_no_sudden_drop,
        f"At least {MIN_KEPT_SHARE:.0%} of the previous snapshot's offers.",
    ),
}


BASELINE_DAYS = 7  # an older snapshot says little about what today's page should hold
CONFIRM_TOLERANCE = 0.10


# One provider run as the baseline rule reads it: (status, offers, offers the parser saw or None).
RunRow = tuple[str, int, int | None]


def baseline_from_runs(newest_first: list[RunRow], current: int) -> int | None:
    """The baseline rule over the provider's runs of the last BASELINE_DAYS, newest first.

    The baseline is the newest successful snapshot of the last week. A drop seen on two runs in a
    row (the previous attempt failed with about as many offers as today) is a real change on the
    provider's side, not a broken page, so it is accepted rather than blocking the provider forever.
    """
    if not newest_first:
        return None
    status, _, parsed = newest_first[0]
    if (
        status != "success"
        and parsed is not None
        and abs(parsed - current) <= CONFIRM_TOLERANCE * max(current, 1)
    ):
        return None
    successes = [offers for status, offers, _ in newest_first if status == "success"]
    return int(successes[0]) if successes else None


def _runs_between(
    warehouse: WarehouseResource, provider: str, first: dt.date, last: dt.date
) -> dict[dt.date, RunRow]:
    from gpuprice.warehouse.queries import provider_runs_between

    with step_connection(warehouse) as con:
        rows = provider_runs_between(con, provider, first, last)
    return {day: (status, offers, parsed) for day, status, offers, parsed in rows}


def baseline_offer_count(
    warehouse: WarehouseResource, provider: str, day: dt.date, current: int
) -> int | None:
    """The offer count today's page is compared with, or None when there is nothing to compare."""
    return RunHistory.before(warehouse, provider, day).baseline(day, current)


class RunHistory:
    """A provider's recent runs, extended as a backfill decides each date in order, so that every
    date is checked against exactly what a run for that date alone would have found."""

    def __init__(self, runs: dict[dt.date, RunRow]) -> None:
        self.runs = dict(runs)

    @classmethod
    def before(cls, warehouse: WarehouseResource, provider: str, first: dt.date) -> RunHistory:
        """The runs of the BASELINE_DAYS before ``first`` (the backfill's first date)."""
        return cls(
            _runs_between(
                warehouse, provider, first - dt.timedelta(days=BASELINE_DAYS), first - dt.timedelta(days=1)
            )
        )

    def baseline(self, day: dt.date, current: int) -> int | None:
        window = [day - dt.timedelta(days=n) for n in range(1, BASELINE_DAYS + 1)]
        return baseline_from_runs([self.runs[d] for d in window if d in self.runs], current)

    def record(self, day: dt.date, status: str, offers: int, parsed: int | None) -> None:
        self.runs[day] = (status, offers, parsed)


def check_specs(provider: str) -> list[dg.AssetCheckSpec]:
    """The blocking checks declared on ``parsed/parsed_<provider>`` (evaluated inside that asset)."""
    asset_key = provider_asset_key("parsed", provider)
    return [
        dg.AssetCheckSpec(name=name, asset=asset_key, blocking=True, description=description)
        for name, (_, description) in CHECKS.items()
    ]


@dataclass(frozen=True)
class CheckOutcome:
    """One check on one date's offers."""

    name: str  # a key of CHECKS
    passed: bool
    detail: str


def evaluate_checks(result: ParseResult, previous_count: int | None) -> tuple[CheckOutcome, ...]:
    """Every check on one date's offers, in CHECKS order."""
    outcomes = []
    for name, (fn, _) in CHECKS.items():
        passed, detail = fn(result, previous_count)
        outcomes.append(CheckOutcome(name, passed, detail))
    return tuple(outcomes)
