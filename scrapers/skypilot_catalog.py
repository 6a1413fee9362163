"""SkyPilot's price catalog (github.com/skypilot-org/skypilot-catalog): one ``vms.csv`` -> offers.

Layout (read from the public repository, e.g. ``catalogs/v7/lambda/vms.csv``,
``catalogs/v7/runpod/vms.csv``, ``catalogs/v7/vast/vms.csv``, ``catalogs/v7/aws/vms.csv``,
``catalogs/v6/azure/vms.csv``, ``catalogs/v5/oci/vms.csv``; the fetchers that write them are
``sky/catalog/data_fetchers/fetch_<cloud>.py`` in skypilot-org/skypilot): one CSV per cloud under
``catalogs/v<N>/<cloud>/vms.csv``, one row per instance type and region (AWS, RunPod and OCI: per
availability zone), columns named in a header whose order differs per cloud:

- ``InstanceType`` (``gpu_8x_h100_sxm5``, ``p5.48xlarge``, ``1x_H100-SXM_SECURE``,
  ``8x-H100_SXM-32-65536``), ``AcceleratorName`` (``H100``, ``A100-80GB``, ``RTXA6000``; empty
  for CPU instances), ``AcceleratorCount`` (a float; a fraction of a GPU on some Azure sizes),
  ``Price`` and ``SpotPrice`` (USD per instance-hour; empty or 0 when not sold that way),
  ``Region``; optional ``vCPUs``, ``MemoryGiB``, ``GpuInfo`` (a Python-literal dict whose
  ``SizeInMiB`` is memory per GPU, except Vast.ai's, which is the instance total; OCI writes
  ``GpuMemory`` in GB for the instance), ``AvailabilityZone``, ``Generation``.

Each GPU row becomes an on-demand offer (``Price``) and a spot offer (``SpotPrice``), priced per
GPU as the instance price over the GPU count. Zones of one region collapse to the region's
cheapest zone. The GPU slug comes from the product's own mapping: a hyperscaler's instance type
from ``data/instance_types.csv``, otherwise the accelerator name (with the instance type's words
and the GPU memory as hints) through :func:`normalize_gpu`. A row whose GPU cannot be mapped (a
fraction of a GPU, a part the catalog does not hold) is quarantined with its raw names; a CPU
row is skipped. A file without the required columns, or with a price that is not a number, is
refused whole (:class:`CatalogFileError`, naming the file and the column).
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd
from pydantic import ValidationError

from gpuprice.scrapers.gpu_names import UNKNOWN, normalize_gpu
from gpuprice.scrapers.instance_types import lookup
from gpuprice.scrapers.offer import Offer
from gpuprice.scrapers.parsing import check_gpu_hour_floor

SOURCE_NAME = "skypilot-catalog"
PARSER_VERSION = "skypilot-catalog/1"
CATALOG_PREFIX = "catalogs/"
# catalogs/v7/aws/vms.csv -> version 7, cloud "aws"
FILE_PATTERN = re.compile(r"^catalogs/v(\d+)/([A-Za-z0-9_.-]+)/vms\.csv$")
# The catalog's cloud folder -> gpuprice provider. Clouds gpuprice does not track are not read.
CLOUD_PROVIDERS: dict[str, str] = {
    "lambda": "lambda",
    "runpod": "runpod",
    "vast": "vastai",
    "aws": "aws",
    "azure": "azure",
    "oci": "oci",
    "nebius": "nebius",
}
HYPERSCALERS = frozenset({"aws", "azure", "oci"})
REQUIRED_COLUMNS: tuple[str, ...] = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
# Clouds whose GpuInfo memory is the instance's total, not one GPU's (fetch_vast.py writes
# gpu_total_ram; OCI's GpuMemory is the shape's).
_TOTAL_MEMORY_CLOUDS = frozenset({"vast", "oci"})
# SkyPilot's RunPod names that drop the form factor (fetch_runpod.py GPU_NAME_OVERRIDES maps
# RunPod's "A100 PCIe" to "A100-80GB" and "H100 PCIe" to "H100"; "V100-SXM2" is the 16 GB card).
_ACCELERATOR_ALIASES: dict[str, dict[str, str]] = {
    "runpod": {"A100-80GB": "A100 80GB PCIe", "H100": "H100 PCIe", "V100-SXM2": "V100 SXM2 16GB"},
}
_SIZE_MIB = re.compile(r"'SizeInMiB':\s*([0-9.]+)")
_GPU_MEMORY_GB = re.compile(r"'GpuMemory':\s*([0-9.]+)")


class CatalogFileError(ValueError):
    """A catalog file that cannot be read as the documented layout (names the file and column)."""


@dataclass
class CloudCoverage:
    """How many of a cloud's GPU rows mapped to a catalog GPU (the mapping coverage)."""

    gpu_rows: int = 0
    mapped_rows: int = 0
    cpu_rows: int = 0

    def add(self, other: CloudCoverage) -> None:
        self.gpu_rows += other.gpu_rows
        self.mapped_rows += other.mapped_rows
        self.cpu_rows += other.cpu_rows


@dataclass
class ParsedCatalog:
    """One catalog file's offers, its quarantined rows ``(provider, raw, reason)`` and coverage."""

    provider: str
    offers: list[Offer] = field(default_factory=list)
    quarantined: list[tuple[str, str, str]] = field(default_factory=list)
    coverage: CloudCoverage = field(default_factory=CloudCoverage)


@dataclass(frozen=True)
class CatalogFile:
    """One cloud's catalog file in a commit: its path, blob and layout version."""

    cloud: str
    provider: str
    path: str
    blob: str
    version: int


def catalog_files(tree: Mapping[str, str]) -> list[CatalogFile]:
    """Per tracked cloud, its newest-layout ``vms.csv`` in a tree (``{path: blob}``)."""
    best: dict[str, CatalogFile] = {}
    for path, blob in tree.items():
        match = FILE_PATTERN.match(path)
        if not match:
            continue
        version, cloud = int(match.group(1)), match.group(2)
        provider = CLOUD_PROVIDERS.get(cloud)
        if provider is None:
            continue
        known = best.get(cloud)
        if known is None or version > known.version:
            best[cloud] = CatalogFile(cloud=cloud, provider=provider, path=path, blob=blob, version=version)
    return [best[c] for c in sorted(best)]


def _prices(frame: pd.DataFrame, column: str, where: str) -> pd.Series:
    """A price column as floats (NaN where empty, "nan" or not positive: not sold that way);
    CatalogFileError naming the file, line and column at the first cell that is not a number."""
    cells = frame[column]
    values = pd.to_numeric(cells, errors="coerce")  # C speed; only the misses are looked at
    misses: list[int] = (values.isna() & (cells != "")).to_numpy().nonzero()[0].tolist()
    for index in misses:
        text = str(cells.iloc[index]).strip()
        try:
            number = float(text) if text else math.nan
        except ValueError:
            number = None
        if number is None or math.isinf(number):
            raise CatalogFileError(f"{where} line {index + 2}: column {column}: unparseable price {text!r}")
        values.iloc[index] = number
    infinite: list[int] = values.isin((math.inf, -math.inf)).to_numpy().nonzero()[0].tolist()
    if infinite:
        raise CatalogFileError(
            f"{where} line {infinite[0] + 2}: column {column}: unparseable price {cells.iloc[infinite[0]]!r}"
        )
    return values.where(values > 0)


def _number(text: str | None) -> float | None:
    try:
        value = float((text or "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def _memory_per_gpu(cloud: str, gpu_info: str, count: int) -> float | None:
    """GPU memory per GPU in GB from GpuInfo, when it states one."""
    match = _SIZE_MIB.search(gpu_info)
    if match:
        gb = float(match.group(1)) / 1024
    else:
        match = _GPU_MEMORY_GB.search(gpu_info)
        if not match:
            return None
        gb = float(match.group(1))
        return gb / count if count else None  # OCI: the shape's memory
    if cloud in _TOTAL_MEMORY_CLOUDS and count:
        gb /= count
    return gb if gb > 0 else None


@functools.lru_cache(maxsize=65536)
def _gpu(
    cloud: str, provider: str, instance: str, accelerator: str, vram: float | None
) -> tuple[str, str, float | None, int | None]:
    """(slug or 'unknown', raw GPU name, memory per GPU, GPU count from the mapping or None)."""
    if cloud in HYPERSCALERS:
        row = lookup(provider, instance)
        if row is not None:
            return row.gpu, row.gpu_raw, row.vram_gb, row.gpu_count
    name = _ACCELERATOR_ALIASES.get(cloud, {}).get(accelerator, accelerator)
    # The instance type's words carry the form factor the accelerator name drops
    # (gpu_8x_h100_sxm5, 2x-H100_NVL-32-65536, 1x_A100-80GB-SXM_SECURE).
    slug = normalize_gpu(f"{name} {instance}", provider=provider, vram_gb=vram)
    if slug == UNKNOWN:
        slug = normalize_gpu(name, provider=provider, vram_gb=vram)
    return slug, name, vram, None


def _read_frame(text: str, where: str) -> pd.DataFrame:
    """The CSV as text columns (names stripped); refused when unreadable or a required column is missing."""
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_filter=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error) as exc:
        message = " ".join(str(exc).split())
        raise CatalogFileError(f"{where}: not a readable CSV file ({message})") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise CatalogFileError(
            f"{where}: missing column {', '.join(missing)}; expected at least {', '.join(REQUIRED_COLUMNS)}"
        )
    return frame


def _gpu_rows(frame: pd.DataFrame, where: str) -> tuple[pd.Series, pd.Series, pd.Series, pd.Series]:
    """(which rows are GPU rows, their accelerator names, GPU counts as text, as numbers); a count
    that is not a number refuses the file, naming its line."""
    is_gpu = (frame["AcceleratorName"] != "") & (frame["AcceleratorCount"] != "")
    accelerators = frame["AcceleratorName"][is_gpu].str.strip()
    counts_text = frame["AcceleratorCount"][is_gpu].str.strip()
    is_gpu[is_gpu] = (accelerators != "").to_numpy() & (counts_text != "").to_numpy()
    accelerators, counts_text = accelerators[accelerators != ""], counts_text[accelerators != ""]
    accelerators, counts_text = accelerators[counts_text != ""], counts_text[counts_text != ""]
    counts = pd.to_numeric(counts_text, errors="coerce")
    if counts.isna().any():
        line = int(counts.index[counts.isna().to_numpy()][0])  # the frame's index is the row number
        raise CatalogFileError(
            f"{where} line {line + 2}: column AcceleratorCount: not a number {counts_text[line]!r}"
        )
    return is_gpu, accelerators, counts_text, counts


@dataclass(frozen=True)
class _CatalogRow:
    """The columns of one GPU row the offers are built from (prices NaN where not sold)."""

    instance: str
    accelerator: str
    count_text: str
    count: float
    info: str
    region: str
    cpus: str
    ram: str
    on_demand: float
    spot: float


def _add_row(
    parsed: ParsedCatalog, seen_quarantine: set[str], best: dict[tuple, Offer], cloud: str, row: _CatalogRow
) -> bool:
    """Offers of one GPU row (on-demand and spot) into ``best`` (a region's cheapest zone stands
    for it), or the row's reasons into the quarantine; whether any offer was kept."""
    provider = CLOUD_PROVIDERS[cloud]
    instance, accelerator = row.instance, row.accelerator
    raw = f"{instance}: {accelerator} x{row.count_text}"
    if not math.isfinite(row.count) or row.count <= 0 or row.count != int(row.count):
        _quarantine(parsed, seen_quarantine, raw, f"{row.count_text} GPUs: not a whole GPU")
        return False
    count = int(row.count)
    vram = _memory_per_gpu(cloud, row.info, count)
    slug, gpu_raw, vram, mapped_count = _gpu(cloud, provider, instance, accelerator, vram)
    if slug == UNKNOWN:
        _quarantine(parsed, seen_quarantine, raw, f"GPU {gpu_raw!r} maps to no catalog GPU")
        return False
    count = mapped_count or count
    region = row.region.strip() or None
    community = cloud == "vast" or instance.upper().endswith("_COMMUNITY")
    vcpus, ram_gb = _number(row.cpus), _number(row.ram)
    mapped = False
    for tier, price in (("on_demand", row.on_demand), ("spot", row.spot)):
        if price != price:  # NaN: not sold this way
            continue
        try:  # the floor pages and import-observations apply (scrapers/parsing.py)
            check_gpu_hour_floor(price / count, f"{price} per instance of {count}")
        except ValueError as exc:
            _quarantine(parsed, seen_quarantine, f"{raw} {tier}", str(exc))
            continue
        try:
            offer = _offer(
                provider, slug, gpu_raw, count, vram, tier, community, price, region, instance, vcpus, ram_gb
            )
        except ValidationError as exc:
            reason = "; ".join(e["msg"] for e in exc.errors())
            _quarantine(parsed, seen_quarantine, f"{raw} {tier}", f"not a valid offer: {reason}")
            continue
        mapped = True
        known = best.get(offer.key)
        # Zones of one region: the region's cheapest zone stands for it.
        if known is None or offer.usd_per_gpu_hour < known.usd_per_gpu_hour:
            best[offer.key] = offer
    return mapped


def parse_catalog(text: str, *, cloud: str, where: str, check_only: bool = False) -> ParsedCatalog:
    """Offers of one ``vms.csv`` (``where`` names the file in errors: path and commit).

    The CSV is read by pandas' C reader (an AWS file has ~20,000 rows, a tenth of them GPUs);
    prices are checked on every row, GPU or not: a garbled column refuses the whole file.
    ``check_only`` stops after the checks (header, prices, GPU counts): no offers, no
    quarantine, only the coverage counts of GPU and CPU rows.
    """
    provider = CLOUD_PROVIDERS[cloud]
    frame = _read_frame(text, where)
    on_demand = _prices(frame, "Price", where)
    spot = _prices(frame, "SpotPrice", where) if "SpotPrice" in frame.columns else None
    is_gpu, accelerators, counts_text, counts = _gpu_rows(frame, where)
    parsed = ParsedCatalog(provider=provider)
    parsed.coverage.gpu_rows = int(is_gpu.sum())
    parsed.coverage.cpu_rows = len(frame) - parsed.coverage.gpu_rows
    if check_only:
        return parsed
    rows = frame[is_gpu]

    def column(name: str) -> list[str]:
        return rows[name].tolist() if name in rows.columns else [""] * len(rows)

    best: dict[tuple, Offer] = {}
    seen_quarantine: set[str] = set()
    spots = spot[is_gpu].tolist() if spot is not None else [math.nan] * len(rows)
    for values in zip(
        (t.strip() for t in column("InstanceType")),
        accelerators.tolist(),
        counts_text.tolist(),
        counts.tolist(),
        column("GpuInfo"),
        column("Region"),
        column("vCPUs"),
        column("MemoryGiB"),
        on_demand[is_gpu].tolist(),
        spots,
        strict=True,
    ):
        if _add_row(parsed, seen_quarantine, best, cloud, _CatalogRow(*values)):
            parsed.coverage.mapped_rows += 1
    parsed.offers = list(best.values())
    return parsed


@functools.lru_cache(maxsize=8192)
def _offer(
    provider: str,
    gpu: str,
    gpu_raw: str,
    count: int,
    vram: float | None,
    tier: str,
    community: bool,
    price: float,
    region: str | None,
    sku: str,
    vcpus: float | None,
    ram: float | None,
) -> Offer:
    """One validated offer (offers are immutable: a row repeated day after day is built once)."""
    return Offer(
        provider=provider,  # type: ignore[arg-type]
        gpu=gpu,
        gpu_raw=gpu_raw,
        gpu_count=count,
        vram_gb=vram,
        tier=tier,  # type: ignore[arg-type]
        community=community,
        usd_per_gpu_hour=price / count,
        usd_per_instance_hour=price,
        region=region,
        sku=sku,
        vcpus=vcpus,
        ram_gb=ram,
    )


def _quarantine(parsed: ParsedCatalog, seen: set[str], raw: str, reason: str) -> None:
    if raw not in seen:  # one entry per instance type and name, not one per region
        seen.add(raw)
        parsed.quarantined.append((parsed.provider, raw, reason))
