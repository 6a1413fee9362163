"""The offer schema every parser returns, and the parse report that travels with it.

The JSON form of :class:`Offer` (``Offer.contract_dict``) is exactly the offer of
``gpuprice parse`` in the command-line contract; the extra fields feed the warehouse.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

PROVIDERS: tuple[str, ...] = (
    "runpod",
    "lambda",
    "coreweave",
    "nebius",
    "crusoe",
    "massedcompute",
    "azure",
    "aws",
    "oci",
    "vastai",
)
# How each provider sells GPUs: a GPU cloud, a hyperscaler (GPUs inside a general cloud, per
# region, with spot and commitments) or a marketplace (independent hosts set their own prices).
PROVIDER_KINDS: dict[str, str] = {
    "runpod": "gpu_cloud",
    "lambda": "gpu_cloud",
    "coreweave": "gpu_cloud",
    "nebius": "gpu_cloud",
    "crusoe": "gpu_cloud",
    "massedcompute": "gpu_cloud",
    "azure": "hyperscaler",
    "aws": "hyperscaler",
    "oci": "hyperscaler",
    "vastai": "marketplace",
}
TIERS: tuple[str, ...] = ("on_demand", "spot", "reserved")

Provider = Literal[
    "runpod", "lambda", "coreweave", "nebius", "crusoe", "massedcompute", "azure", "aws", "oci", "vastai"
]
Tier = Literal["on_demand", "spot", "reserved"]
# What kind of price a row is: ``list`` a published per-GPU-hour rate; ``from`` a floor ("from $x",
# "starting at": the cheapest host variant, not a rate you can count on); ``lowest_now`` the cheapest
# machine right now (Runpod's API, a marketplace's minimum ask); ``bid_floor`` a marketplace's minimum
# bid for interruptible capacity (Vast.ai ``min_bid``: what a bid must beat, not what it wins at);
# ``contract`` a cluster contract price (Lambda's 1-Click Clusters: a term and a GPU count agreed with
# sales). Rankings and headlines use ``list`` unless asked for the others.
PriceBasis = Literal["list", "from", "lowest_now", "bid_floor", "contract"]
PRICE_BASES: tuple[str, ...] = ("list", "from", "lowest_now", "bid_floor", "contract")
# What a bare "$x/hr" on a provider's page prices (see scrapers/registry.py).
PriceUnit = Literal["gpu_hour", "instance_hour"]
# Which reader produced a page's offers: the provider's structured reader or the generic fallback.
ParseStrategy = Literal["structured", "fallback"]
PARSE_STRATEGIES: tuple[str, ...] = ("structured", "fallback")

CONTRACT_FIELDS: tuple[str, ...] = (
    "provider",
    "gpu",
    "gpu_raw",
    "gpu_count",
    "vram_gb",
    "tier",
    "community",
    "commitment_months",
    "usd_per_gpu_hour",
    "usd_per_instance_hour",
    "region",
    "available",
    "effective_from",
    "price_basis",
)


def round_price(value: float | Decimal) -> float:
    """Round a USD price to 4 decimals, half up (as the contract asks)."""
    return float(Decimal(str(value)).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP))


# What makes an offer unique within one provider's snapshot: the same product, size, tier, term,
# region, start date and kind of price. A stored snapshot's rows compare on the same fields.
OFFER_KEY_FIELDS = (
    "sku",
    "gpu_count",
    "tier",
    "community",
    "commitment_months",
    "region",
    "effective_from",
    "price_basis",
)


# The same offer across days and snapshots: its key without ``effective_from`` (a scheduled price
# is a later price of the same offer). The weekly price moves and the catalog history key on it.
OFFER_IDENTITY_FIELDS = tuple(name for name in OFFER_KEY_FIELDS if name != "effective_from")


def offer_key(row: object) -> tuple:
    """The :data:`OFFER_KEY_FIELDS` of an offer or of a stored snapshot's row."""
    return tuple(getattr(row, name) for name in OFFER_KEY_FIELDS)


class Offer(BaseModel):
    """One priced way to rent GPUs from one provider, as a page states it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Provider
    gpu: str = Field(description="GPU slug from the catalog, or 'unknown'")
    gpu_raw: str = Field(min_length=1, description="the GPU name as the page writes it")
    gpu_count: int = Field(ge=1, le=4096)
    vram_gb: float | None = Field(default=None, gt=0, le=2048)
    tier: Tier = "on_demand"
    community: bool = False
    commitment_months: int | None = Field(default=None, ge=0, le=120)
    usd_per_gpu_hour: float = Field(gt=0, lt=1000)
    usd_per_instance_hour: float | None = Field(default=None, gt=0)
    region: str | None = None
    available: bool | None = None
    effective_from: dt.date | None = None
    # Warehouse-only fields (not part of the parse contract).
    sku: str = Field(min_length=1, description="provider's name for the offer, stable across days")
    vcpus: float | None = Field(default=None, gt=0)
    ram_gb: float | None = Field(default=None, gt=0)
    storage_gb: float | None = Field(default=None, ge=0)
    price_basis: PriceBasis = "list"
    # How much the source says is rentable right now: Runpod's largest available GPU count,
    # the number of Vast.ai listings behind a statistic. None when the source states nothing.
    capacity: int | None = Field(default=None, ge=0)
    # AWS's spot interruption bucket for this instance and region ("<5%" ... ">20%", the Spot
    # Instance Advisor's label), where the source published one; the cost model reads it.
    interruption_bucket: str | None = None

    @field_validator("usd_per_gpu_hour", "usd_per_instance_hour")
    @classmethod
    def _round(cls, value: float | None) -> float | None:
        return None if value is None else round_price(value)

    @field_validator("gpu_raw", "sku")
    @classmethod
    def _strip(cls, value: str) -> str:
        return " ".join(value.split())

    @model_validator(mode="after")
    def _instance_price_consistent(self) -> Offer:
        if self.usd_per_instance_hour is not None:
            per_gpu = self.usd_per_instance_hour / self.gpu_count
            if abs(per_gpu - self.usd_per_gpu_hour) > max(0.0002, 0.001 * per_gpu):
                raise ValueError(
                    f"usd_per_gpu_hour {self.usd_per_gpu_hour} != instance price "
                    f"{self.usd_per_instance_hour} / {self.gpu_count} GPUs"
                )
        if self.tier == "reserved" and self.commitment_months is None:
            raise ValueError("a reserved offer needs commitment_months")
        return self

    @property
    def key(self) -> tuple:
        """What makes an offer unique within one provider's snapshot."""
        return offer_key(self)

    def contract_dict(self) -> dict:
        """The offer as ``gpuprice parse`` prints it (contract fields only, JSON-ready)."""
        data = self.model_dump(mode="json")
        return {name: data[name] for name in CONTRACT_FIELDS}


class RejectedRow(BaseModel):
    """A row the parser saw but could not turn into a valid offer."""

    raw: str = Field(description="the row as text (cells joined with ' | ')")
    reason: str


class ParseReport(BaseModel):
    """What a parser saw: the warehouse stores it, checks read it, people debug with it."""

    provider: Provider
    rows_seen: int = 0
    offers: int = 0
    unpriced_rows: int = Field(default=0, description="rows such as 'Contact sales' (not offers)")
    rejected: list[RejectedRow] = Field(default_factory=list)
    unknown_gpus: list[str] = Field(default_factory=list)
    missing_columns: list[str] = Field(default_factory=list)
    unexpected_columns: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    parse_strategy: ParseStrategy = "structured"


class ParseResult(BaseModel):
    offers: list[Offer]
    report: ParseReport


class StructureMissing(Exception):
    """The page has no recognisable price structure (the contract's exit 3)."""

    def __init__(self, provider: str, what: str, report: ParseReport | None = None) -> None:
        super().__init__(f"{provider}: no price structure found: {what}")
        self.provider = provider
        self.what = what
        # What was seen anyway (the fallback's quarantined prices without GPU names), if anything.
        self.report = report
