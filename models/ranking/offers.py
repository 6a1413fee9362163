"""The day's offers as the ranking reads them.

Exists so that everything about an offer row (which offers can rank at all, how many GB its GPUs
hold, how old its price is, which interruption class it belongs to) is decided in one place, once
per offer, before any workload is looked at. The rest of the package only indexes the arrays of
:class:`Offers`. Which region of a hyperscaler's offer counts is decided before the offers get
here, where the rows are: ``warehouse.queries.offers_as_of`` returns each offer once, at its
cheapest region (the rule analytics.cheapest_region shows too); a frame given here is ranked row
by row.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuprice.models.ranking.distinct import distinct_pairs
from gpuprice.models.spot_risk import bucket_rate
from gpuprice.warehouse.staleness import age_days

REQUIRED_OFFER_COLUMNS: tuple[str, ...] = (
    "provider",
    "sku",
    "gpu",
    "gpu_count",
    "tier",
    "community",
    "usd_per_gpu_hour",
)
_OFFER_COLUMNS_USED = frozenset(
    {
        *REQUIRED_OFFER_COLUMNS,
        "snapshot_date",
        "observed_on",
        "vram_gb",
        "commitment_months",
        "price_basis",
        "effective_from",
        "region",
        "interruption_bucket",
    }
)
# Interruption classes of offers (2 x spot + community): a configuration's node count and its
# wall time depend on how often its capacity is taken away, so configurations are per class.
RISKS: tuple[int, ...] = (0, 1, 2, 3)

Card = tuple[str, float]  # a GPU type as the memory model sees it: (catalog slug, GB per GPU)


def risk_class(spot: np.ndarray | bool, community: np.ndarray | bool) -> np.ndarray:
    """The interruption class (one of RISKS) of spot / community capacity."""
    return 2 * np.asarray(spot, dtype=np.int64) + np.asarray(community, dtype=np.int64)


def risk_is_spot(risk: int) -> bool:
    return risk >= 2


def risk_is_community(risk: int) -> bool:
    return risk % 2 == 1


@dataclass(frozen=True)
class Offers:
    """The usable offers as parallel arrays (index = offer), in the source frame's order.

    Values many offers share are stored once: ``card`` indexes ``cards`` and ``provider_date``
    indexes ``provider_dates`` (the staleness warnings are per provider and price date).
    """

    card: np.ndarray  # offer -> index into cards
    cards: list[Card]  # distinct (gpu slug, GB per GPU), sorted
    price: np.ndarray  # USD per GPU-hour
    gpu_count: np.ndarray  # GPUs per offer, as sold
    spot: np.ndarray
    community: np.ndarray
    provider_date: np.ndarray  # offer -> index into provider_dates
    provider_dates: list[tuple[str, dt.date | None]]  # distinct (provider, date of the price's page)
    columns: dict[str, np.ndarray]  # provider, sku, gpu, tier, commitment_months, price_basis, region, ...
    spot_rate: np.ndarray  # measured preemptions per node-hour (AWS buckets); NaN: the default
    age: np.ndarray  # days between the price's page and the ranking date (0 for a later page)

    def __len__(self) -> int:
        return len(self.price)

    @property
    def risk(self) -> np.ndarray:
        return risk_class(self.spot, self.community)


def as_date(value: object) -> dt.date | None:
    """A date from whatever a frame holds (date, datetime, Timestamp, ISO string); None for missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return pd.Timestamp(value).date()
    return dt.date.fromisoformat(str(value)[:10])


def _column(frame: pd.DataFrame, name: str, default: object) -> pd.Series:
    return frame[name] if name in frame.columns else pd.Series(default, index=frame.index)


@functools.cache
def _catalog_memory() -> dict[str, float]:
    from gpuprice.models.catalog import load_gpu_catalog

    catalog = load_gpu_catalog()
    return dict(zip(catalog["slug"].tolist(), catalog["memory_gb"].tolist(), strict=True))


def _rankable(offers: pd.DataFrame, price: pd.Series, day: dt.date) -> np.ndarray:
    """A catalog GPU, a positive price, at least one GPU, in force on ``day``."""
    effective = pd.to_datetime(_column(offers, "effective_from", None), errors="coerce")
    return (
        offers["gpu"].isin(_catalog_memory().keys()).to_numpy()
        & (price > 0).to_numpy()
        & (pd.to_numeric(offers["gpu_count"], errors="coerce") >= 1).to_numpy()
        & ~(effective > pd.Timestamp(day)).to_numpy()
    )


def _cards(frame: pd.DataFrame) -> tuple[np.ndarray, list[Card]]:
    """Each offer's card. GB per GPU: the offer's figure when plausible (GH200 96/144 GB share a
    slug), else the catalog's."""
    nominal = frame["gpu"].map(_catalog_memory()).to_numpy(dtype=float)
    stated = pd.to_numeric(_column(frame, "vram_gb", np.nan), errors="coerce").to_numpy(dtype=float)
    plausible = np.isfinite(stated) & (stated >= 0.5 * nominal) & (stated <= 2.0 * nominal)
    memory = np.round(np.where(plausible, stated, nominal), 1)
    slug_codes, slugs = pd.factorize(frame["gpu"], sort=True)
    memories, memory_codes = np.unique(memory, return_inverse=True)
    card, slug, gb = distinct_pairs(slug_codes, memory_codes)
    return card, [
        (str(slugs[s]), float(memories[m])) for s, m in zip(slug.tolist(), gb.tolist(), strict=True)
    ]


def _spot_rates(frame: pd.DataFrame) -> np.ndarray:
    buckets = _column(frame, "interruption_bucket", None).tolist()
    rates = [bucket_rate(b if isinstance(b, str) else None) for b in buckets]
    return np.array([np.nan if rate is None else rate for rate in rates], dtype=float)


def usable_offers(offers: pd.DataFrame, day: dt.date) -> Offers:
    """Offers that can be ranked: a catalog GPU, a positive price, in force on ``day``."""
    missing = [c for c in REQUIRED_OFFER_COLUMNS if c not in offers.columns]
    if missing:
        raise ValueError(f"rank_offers: offers lack columns {missing}")
    price = pd.to_numeric(offers["usd_per_gpu_hour"].astype("float64"), errors="coerce")
    keep = _rankable(offers, price, day)
    wanted = [c for c in offers.columns if c in _OFFER_COLUMNS_USED]
    frame = offers.loc[keep, wanted].reset_index(drop=True)  # source order breaks the last ties
    card, cards = _cards(frame)

    # A price is as old as its page (observed_on); frames without it fall back to the snapshot date.
    price_dates = _column(frame, "snapshot_date", day)
    if "observed_on" in frame.columns:
        price_dates = frame["observed_on"].where(frame["observed_on"].notna(), price_dates)
    date_codes, date_values = pd.factorize(price_dates, sort=False, use_na_sentinel=False)
    dates = [as_date(d) for d in date_values]
    provider_codes, providers = pd.factorize(frame["provider"], sort=False)
    provider_date, provider, date = distinct_pairs(provider_codes, date_codes)
    provider_dates = [
        (str(providers[p]), dates[d]) for p, d in zip(provider.tolist(), date.tolist(), strict=True)
    ]
    # When the price was seen (output): the same page dates.
    observed = pd.to_datetime(pd.Series(price_dates, index=frame.index), errors="coerce")
    observed_codes, observed_values = pd.factorize(observed, use_na_sentinel=False)
    observed_dates = np.array([as_date(v) for v in observed_values] + [None], dtype=object)
    ages = np.array([max(age_days(d, day) or 0, 0) for d in dates], dtype=np.int64)
    return Offers(
        card=card,
        cards=cards,
        price=price.to_numpy(dtype=float)[keep],
        gpu_count=frame["gpu_count"].to_numpy(dtype=np.int64),
        spot=(frame["tier"] == "spot").to_numpy(),
        community=frame["community"].fillna(False).astype(bool).to_numpy(),
        provider_date=provider_date,
        provider_dates=provider_dates,
        columns={
            "provider": frame["provider"].to_numpy(dtype=object),
            "sku": frame["sku"].to_numpy(dtype=object),
            "gpu": frame["gpu"].to_numpy(dtype=object),
            "tier": frame["tier"].to_numpy(dtype=object),
            "commitment_months": pd.to_numeric(
                _column(frame, "commitment_months", np.nan), errors="coerce"
            ).to_numpy(dtype=float, na_value=np.nan),
            "price_basis": _column(frame, "price_basis", "list").fillna("list").to_numpy(dtype=object),
            "region": _column(frame, "region", None).to_numpy(dtype=object),
            "bucket": _column(frame, "interruption_bucket", None).to_numpy(dtype=object),
            "observed_on": observed_dates[observed_codes],
        },
        spot_rate=_spot_rates(frame),
        age=ages[date_codes],
    )
