"""Which GPUs an instance type carries: data, not guesses (``scrapers/data/instance_types.csv``).

Hyperscalers price instances (``p5.48xlarge``, ``Standard_ND96isr_H100_v5``, ``BM.GPU.H100.8``),
not GPUs. The mapping lives in a versioned CSV, one row per instance type with the GPU slug,
the count, the memory per GPU and the public page that states them. An instance type the CSV
does not list is never guessed from its name: the parser reports it as ``unknown`` with the
raw name and quarantined: with no known GPU count its whole-instance price is never divided into
a per-GPU price (:func:`unmapped_reason`). Rows of providers gpuprice does
not scrape yet (``gcp``) are kept for later. Bump :data:`INSTANCE_TYPES_VERSION` (and the
parser versions of the providers it touches) when a row changes what a parser emits.

OCI's price list names GPUs, not shapes: the ``price_name`` column ("Compute - GPU - H100")
is the list's display name each shape is priced under, and ``part_number`` ("B98415") the list's
stable part number for it (matched first: display names gain prefixes such as "OCI - " and
"Oracle Cloud Infrastructure - " and stray double spaces from one list to the next).

Azure's ``price_name`` holds the other names a size is written under where they differ from the
size beyond letters and digits, separated by ";": the name Microsoft's size page gives it
("Standard_ND96asr_A100_v4" for the API's ``armSkuName`` "Standard_ND96asr_v4") and the Retail
Prices meters' ``skuName`` of the size's series ("ND96amsA100v4" of "NDamsr A100 v4", a series of
one size). Trackers keep the meters under those names (:func:`lookup_price_name`).
"""

from __future__ import annotations

import csv
import functools
import re
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from gpuprice.scrapers.gpu_names import UNKNOWN

if TYPE_CHECKING:
    from gpuprice.scrapers.offer_sink import OfferSink

INSTANCE_TYPES_VERSION = 4
INSTANCE_TYPES_CSV = Path(__file__).resolve().parent / "data" / "instance_types.csv"


class InstanceType(BaseModel):
    """One instance type and the GPUs in it, with where that is stated."""

    model_config = ConfigDict(frozen=True)

    provider: str
    instance_type: str = Field(min_length=1)
    price_name: str = ""
    part_number: str = ""
    gpu: str = Field(min_length=1, description="catalog slug or 'unknown'")
    gpu_raw: str = Field(min_length=1)
    gpu_count: int = Field(ge=1, le=64)
    vram_gb: float | None = Field(default=None, gt=0)
    source_url: str = Field(pattern=r"^https://")
    notes: str = ""

    @property
    def price_names(self) -> tuple[str, ...]:
        """The price-list names of the row (``price_name`` split on ";", blanks dropped)."""
        return tuple(name.strip() for name in self.price_name.split(";") if name.strip())


# Prefixes OCI's price list puts before "Compute - GPU - ..." in some lists and not others.
_OCI_NAME_PREFIXES = ("oraclecloudinfrastructure", "oci")


def name_key(text: str) -> str:
    """Comparison key of a name: lower case, letters and digits only, OCI's list prefixes dropped
    ("OCI - Compute - GPU - H100", "Oracle Cloud Infrastructure - Compute - GPU - H100" and
    "compute-gpu-h100" compare equal; so do "Compute  - GPU - A10" and "Compute - GPU - A10")."""
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    for prefix in _OCI_NAME_PREFIXES:
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key


@functools.cache
def instance_types() -> tuple[InstanceType, ...]:
    with INSTANCE_TYPES_CSV.open(newline="", encoding="utf-8") as handle:
        rows = [
            InstanceType.model_validate(
                {
                    k: (v if v != "" or k in ("price_name", "part_number", "notes") else None)
                    for k, v in row.items()
                }
            )
            for row in csv.DictReader(handle)
        ]
    keys = [(row.provider, row.instance_type) for row in rows]
    if len(set(keys)) != len(keys):
        raise ValueError("instance_types.csv lists an instance type twice")
    parts = [(row.provider, row.part_number) for row in rows if row.part_number]
    names = [(row.provider, name_key(name)) for row in rows for name in row.price_names]
    if len(set(parts)) != len(parts) or len(set(names)) != len(names):
        raise ValueError("instance_types.csv gives one price-list part number or name to two shapes")
    return tuple(rows)


@functools.cache
def _by_provider(provider: str) -> dict[str, InstanceType]:
    return {row.instance_type.lower(): row for row in instance_types() if row.provider == provider}


def lookup(provider: str, instance_type: str) -> InstanceType | None:
    """The mapping row of an instance type (case-insensitive), or None when it is not listed."""
    return _by_provider(provider).get(instance_type.strip().lower())


def lookup_price_name(provider: str, price_name: str, part_number: str = "") -> InstanceType | None:
    """The row of a price-list item (OCI): by its ``part_number`` when the table lists it, else by
    its display name (compared with :func:`name_key`); None when neither is listed."""
    rows = [row for row in instance_types() if row.provider == provider]
    part = part_number.strip().upper()
    if part:
        for row in rows:
            if row.part_number and row.part_number.upper() == part:
                return row
    wanted = name_key(price_name)
    for row in rows:
        if any(name_key(name) == wanted for name in row.price_names):
            return row
    return None


def unmapped_reason(name: str, price: object, unit: str) -> str:
    """Why an instance type (or price-list item) the table does not list is quarantined, not priced:
    the GPU count is unknown, so ``price`` (per ``unit``) cannot become a per-GPU price."""
    return (
        f"{name} is not in the instance-to-GPU table (scrapers/data/instance_types.csv): "
        f"GPU count unknown, ${price} per {unit} not priced per GPU"
    )


def add_instance_offer(
    sink: OfferSink,
    raw: str,
    instance: InstanceType,
    *,
    usd_per_instance_hour: Decimal | float | None = None,
    usd_per_gpu_hour: Decimal | float | None = None,
    **fields: Any,
) -> None:
    """One offer of a mapped instance type: its GPU, count and memory from the table, the price
    given per instance hour (divided by the count) or per GPU hour (times it). A GPU the catalog
    does not know is noted as unknown with the table's raw name."""
    if instance.gpu == UNKNOWN:
        sink.note_unknown_gpu(instance.gpu_raw)
    count = instance.gpu_count
    if usd_per_instance_hour is not None:
        usd_per_gpu_hour = usd_per_instance_hour / count
    elif usd_per_gpu_hour is not None:
        usd_per_instance_hour = usd_per_gpu_hour * count
    fields.setdefault("sku", instance.instance_type)
    sink.add(
        raw,
        gpu=instance.gpu,
        gpu_raw=instance.gpu_raw,
        gpu_count=count,
        vram_gb=instance.vram_gb,
        usd_per_gpu_hour=usd_per_gpu_hour,
        usd_per_instance_hour=usd_per_instance_hour,
        **fields,
    )


def provider_instance_types(provider: str) -> list[str]:
    """The instance types listed for a provider (Azure's live filter asks for exactly these)."""
    return [row.instance_type for row in instance_types() if row.provider == provider]
