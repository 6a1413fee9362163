"""The GPU spec catalog (``models/gpu_catalog.csv``): one validated row per GPU slug.

The CSV is versioned data: its first line reads ``# catalog_version: N`` and is bumped whenever
a value changes, so warehouse rows can say which catalog they were computed with. Peak TFLOPS
are dense (datasheet headlines quoted with 2:4 sparsity are halved); each row names its source.
"""

from __future__ import annotations

import functools
import io
import itertools
import math
import re
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from gpuprice.errors import unknown_choice

CATALOG_PATH = Path(__file__).with_name("gpu_catalog.csv")

FormFactor = Literal["sxm", "pcie", "nvl", "superchip", "consumer"]
Vendor = Literal["nvidia", "amd"]
Confidence = Literal["high", "medium", "low"]


class GpuSpec(BaseModel):
    """One GPU as the catalog describes it (per GPU, even for multi-GPU superchips)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    slug: str = Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    name: str = Field(min_length=1)
    vendor: Vendor
    architecture: str = Field(min_length=1)
    memory_gb: float = Field(gt=0, le=1024)  # the memory as sold ("80 GB"), as pages state it
    # What the card holds in 1e9 bytes: nvidia-smi memory.total where a public log cites it (an
    # "80 GB" A100 shows 81920 MiB = 85.9e9 bytes), else the sold figure read as GiB; the memory
    # fit compares predicted peaks (1e9 bytes) with this, never with memory_gb.
    usable_memory_gb: float = Field(gt=0, le=1200)
    memory_source: str = Field(min_length=1)
    memory_bandwidth_tbps: float = Field(gt=0, le=50)
    # For parts without BF16 (V100, T4) this holds the FP16 tensor value; see bf16_native.
    dense_bf16_tflops: float = Field(gt=0, le=20_000)
    bf16_native: bool
    dense_fp8_tflops: float | None = Field(default=None, gt=0, le=40_000)
    form_factor: FormFactor
    # GPU-to-GPU link per GPU, GB/s bidirectional, in the part's standard configuration
    # (AMD rows hold Infinity Fabric); None means PCIe only.
    nvlink_gbps: float | None = Field(default=None, gt=0)
    ecc: bool
    tdp_w: float = Field(gt=0, le=5000)
    release_year: int = Field(ge=2010, le=2035)
    confidence: Confidence
    peak_source: str = Field(min_length=1)
    source_url: str = Field(pattern=r"^https://[^\s/]+\.[a-z]{2,}/\S*$")
    notes: str = ""


_VERSION_RE = re.compile(r"^#\s*catalog_version:\s*(\S+)\s*$")

# pandas dtypes of the loaded frame: nullable floats where the catalog may be empty.
_DTYPES: dict[str, str] = {
    "slug": "string",
    "name": "string",
    "vendor": "string",
    "architecture": "string",
    "memory_gb": "float64",
    "usable_memory_gb": "float64",
    "memory_source": "string",
    "memory_bandwidth_tbps": "float64",
    "dense_bf16_tflops": "float64",
    "bf16_native": "bool",
    "dense_fp8_tflops": "Float64",
    "form_factor": "string",
    "nvlink_gbps": "Float64",
    "ecc": "bool",
    "tdp_w": "float64",
    "release_year": "int64",
    "confidence": "string",
    "peak_source": "string",
    "source_url": "string",
    "notes": "string",
}


def _split_header(text: str) -> tuple[str, str]:
    """The catalog version from the leading comment lines, and the CSV body after them."""
    lines = text.splitlines(keepends=True)
    header = list(itertools.takewhile(lambda line: line.startswith("#"), lines))
    versions = [m.group(1) for m in (_VERSION_RE.match(line.strip()) for line in header) if m]
    if len(versions) != 1:
        raise ValueError(
            f"{CATALOG_PATH.name}: the leading comment lines must hold one '# catalog_version: N'"
        )
    return versions[0], "".join(lines[len(header) :])


def _spec_from_row(row: dict[str, str]) -> GpuSpec:
    # An empty cell is a missing value (e.g. no FP8 on Ampere), except free-text notes.
    values: dict[str, str | None] = {k: (v or None) for k, v in row.items() if k in _DTYPES}
    values["notes"] = row.get("notes", "")
    try:
        return GpuSpec.model_validate(values)
    except ValueError as exc:
        raise ValueError(f"{CATALOG_PATH.name}: bad row {row.get('slug')!r}: {exc}") from exc


@functools.cache
def _read() -> tuple[str, tuple[GpuSpec, ...]]:
    version, body = _split_header(CATALOG_PATH.read_text(encoding="utf-8"))
    raw = pd.read_csv(io.StringIO(body), dtype=str, keep_default_na=False)
    missing = set(_DTYPES) - set(raw.columns)
    if missing:
        raise ValueError(f"{CATALOG_PATH.name}: missing columns {sorted(missing)}")
    specs = tuple(_spec_from_row(row) for row in raw.to_dict(orient="records"))
    slugs = [s.slug for s in specs]
    duplicated = sorted({s for s in slugs if slugs.count(s) > 1})
    if duplicated:
        raise ValueError(f"{CATALOG_PATH.name}: duplicate slugs {duplicated}")
    return version, specs


CATALOG_VERSION: str = _read()[0]


@functools.cache
def _frame() -> pd.DataFrame:
    rows = [spec.model_dump(mode="json") for spec in _read()[1]]
    return pd.DataFrame(rows, columns=list(_DTYPES)).astype(_DTYPES)


def load_gpu_catalog() -> pd.DataFrame:
    """The catalog as a typed DataFrame, one row per slug in file order (a copy: safe to modify)."""
    return _frame().copy()


@functools.cache
def _by_slug() -> dict[str, GpuSpec]:
    return {spec.slug: spec for spec in _read()[1]}


def gpu_slugs() -> list[str]:
    """Every catalog slug, in file order."""
    return list(_by_slug())


def get_gpu(slug: str) -> GpuSpec:
    """The spec of one GPU; BadInput (exit 2) naming close matches for an unknown slug."""
    spec = _by_slug().get(slug)
    if spec is None:
        raise unknown_choice("GPU", slug, gpu_slugs())
    return spec


_COUNT_PREFIX = re.compile(r"^\s*\d+\s*[x\u00d7*]\s*\S", re.IGNORECASE)


def resolve_gpu(name: str) -> GpuSpec:
    """The spec of a GPU named by slug (``a100-80gb-sxm``) or as catalogs and nvidia-smi name it
    (``A100 80GB``, ``NVIDIA A100-SXM4-80GB``, ``RTX 4090``), through the price scrapers' one name
    rule (``scrapers.gpu_names.normalize_gpu``). A name with a count (``8x H100``) or one no rule
    maps is BadInput naming the valid slugs."""
    from gpuprice.errors import BadInput
    from gpuprice.scrapers.gpu_names import UNKNOWN, normalize_gpu

    text = name.strip()
    spec = _by_slug().get(text.lower())
    if spec is not None:
        return spec
    if _COUNT_PREFIX.match(text):
        raise BadInput(f"GPU {name!r} names a count: give the GPU alone and the count as gpus")
    # A name that leaves the memory open ("A100": 40 or 80 GB; "H100": SXM or NVL) is ambiguous
    # for a memory fit: it must map to one slug whatever memory size the card has.
    sizes = sorted({spec.memory_gb for spec in _by_slug().values()})
    slugs = {normalize_gpu(text, vram_gb=size) for size in sizes} - {UNKNOWN}
    slugs &= set(_by_slug())
    if len(slugs) > 1:
        raise BadInput(f"GPU {text!r} is ambiguous for a memory fit; name one of {', '.join(sorted(slugs))}")
    if not slugs:
        raise unknown_choice("GPU", text, gpu_slugs())
    return _by_slug()[slugs.pop()]


def usable_memory_gb(slug: str, stated_gb: float | None = None) -> float:
    """What one GPU holds, in 1e9 bytes, for the memory fit (see ``GpuSpec.usable_memory_gb``).

    ``stated_gb`` is the figure an offer states when it differs from the catalog's (GH200 comes as
    96 and 144 GB under one slug): it is read in the same unit as the catalog's sold figure, so the
    card's usable share scales with it."""
    spec = get_gpu(slug)
    if stated_gb is None or stated_gb == spec.memory_gb:
        return spec.usable_memory_gb
    return stated_gb * spec.usable_memory_gb / spec.memory_gb


# Price plausibility. Renting a GPU costs roughly what owning and powering it costs, and both
# grow with compute (die, tensor throughput) and memory (HBM stacks dominate the bill of
# materials). The capability index is the geometric mean of dense BF16 TFLOPS and memory GB
# (H100 SXM: sqrt(989 x 80) = 281). The band per index unit is deliberately generous: it only
# has to catch parser mistakes (cents read as dollars, an instance price read as a per-GPU
# price, a stray number), never a real market price. Calibrated on observed_prices.csv
# (2022-2026, six providers): the cheapest real price is a Nebius preemptible "from" B200 at
# $0.99 = 0.0016 $/unit-h (4x above the floor); the dearest per unit is a hyperscaler V100 16GB
# at $3.06 (AWS p3) = 0.068 $/unit-h, under the ceiling.
PRICE_FLOOR_USD_PER_INDEX_HOUR = 0.0004
PRICE_CEILING_USD_PER_INDEX_HOUR = 0.08


def capability_index(spec: GpuSpec) -> float:
    """sqrt(dense BF16 TFLOPS x memory GB): the scale the price band is proportional to."""
    return math.sqrt(spec.dense_bf16_tflops * spec.memory_gb)


def plausible_price_band(slug: str) -> tuple[float, float]:
    """(low, high) USD per GPU-hour that a real offer for this GPU must fall within.

    A GPU the catalog does not know ('unknown') gets the widest band: from the lowest floor to
    the highest ceiling of any catalogued GPU, so a $999/GPU-h row is caught even unnamed.
    """
    if slug == "unknown":
        bands = [plausible_price_band(known) for known in gpu_slugs()]
        return min(low for low, _ in bands), max(high for _, high in bands)
    index = capability_index(get_gpu(slug))
    # Round outwards so rounding never narrows the band.
    low = math.floor(index * PRICE_FLOOR_USD_PER_INDEX_HOUR * 10_000) / 10_000
    high = math.ceil(index * PRICE_CEILING_USD_PER_INDEX_HOUR * 100) / 100
    return low, high
