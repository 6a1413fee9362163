"""Which GPUs an instance type carries: data, not guesses (``scrapers/data/instance_types.csv``).

Hyperscalers price instances (``p5.48xlarge``, ``Standard_ND96isr_H100_v5``, ``BM.GPU.H100.8``),
not GPUs. The mapping lives in a versioned CSV, one row per instance type with the GPU slug,
the count, the memory per GPU and the public page that states them. An instance type the CSV
does not list is never guessed from its name: the parser reports it as ``unknown`` with the
raw name (and the GPU count 1 unless the source states one). Rows of providers gpuprice does
not scrape yet (``gcp``) are kept for later. Bump :data:`INSTANCE_TYPES_VERSION` (and the
parser versions of the providers it touches) when a row changes what a parser emits.

OCI's price list names GPUs, not shapes: the ``price_name`` column ("Compute - GPU - H100")
is the list's display name each shape is priced under.
"""

from __future__ import annotations

import csv
import functools
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

INSTANCE_TYPES_VERSION = 1
INSTANCE_TYPES_CSV = Path(__file__).resolve().parent / "data" / "instance_types.csv"


class InstanceType(BaseModel):
    """One instance type and the GPUs in it, with where that is stated."""

    model_config = ConfigDict(frozen=True)

    provider: str
    instance_type: str = Field(min_length=1)
    price_name: str = ""
    gpu: str = Field(min_length=1, description="catalog slug or 'unknown' (A10G)")
    gpu_raw: str = Field(min_length=1)
    gpu_count: int = Field(ge=1, le=64)
    vram_gb: float | None = Field(default=None, gt=0)
    source_url: str = Field(pattern=r"^https://")
    notes: str = ""


def name_key(text: str) -> str:
    """Comparison key of a name: lower case, letters and digits only ("OCI - Compute - GPU - H100"
    and "compute-gpu-h100" compare equal after dropping the "OCI" prefix)."""
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    return key[3:] if key.startswith("oci") else key


@functools.cache
def instance_types() -> tuple[InstanceType, ...]:
    with INSTANCE_TYPES_CSV.open(newline="", encoding="utf-8") as handle:
        rows = [
            InstanceType.model_validate(
                {k: (v if v != "" or k in ("price_name", "notes") else None) for k, v in row.items()}
            )
            for row in csv.DictReader(handle)
        ]
    keys = [(row.provider, row.instance_type) for row in rows]
    if len(set(keys)) != len(keys):
        raise ValueError("instance_types.csv lists an instance type twice")
    return tuple(rows)


@functools.cache
def _by_provider(provider: str) -> dict[str, InstanceType]:
    return {row.instance_type.lower(): row for row in instance_types() if row.provider == provider}


def lookup(provider: str, instance_type: str) -> InstanceType | None:
    """The mapping row of an instance type (case-insensitive), or None when it is not listed."""
    return _by_provider(provider).get(instance_type.strip().lower())


def lookup_price_name(provider: str, price_name: str) -> InstanceType | None:
    """The row whose ``price_name`` matches (OCI's price-list display names), or None."""
    wanted = name_key(price_name)
    for row in instance_types():
        if row.provider == provider and row.price_name and name_key(row.price_name) == wanted:
            return row
    return None


def provider_instance_types(provider: str) -> list[str]:
    """The instance types listed for a provider (Azure's live filter asks for exactly these)."""
    return [row.instance_type for row in instance_types() if row.provider == provider]
