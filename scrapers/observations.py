"""Cited public price observations (observed_prices.csv format) -> price_snapshots rows.

Tiers are normalised to the contract's values; a row that cannot be placed (reseller price,
bad number, a price below the per-GPU-hour floor, unknown provider, a second row with the
natural key of an earlier one) goes to quarantine with the reason, never silently dropped.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
from pathlib import Path

import pandas as pd

from gpuprice.scrapers.offer import PROVIDERS, round_price
from gpuprice.scrapers.parsing import check_gpu_hour_floor

BUNDLED_OBSERVATIONS = Path(__file__).resolve().parent / "data" / "observed_prices.csv"
PARSER_VERSION = "observations/1"
REQUIRED_COLUMNS = ("provider", "gpu", "gpu_count", "tier", "usd_per_gpu_hour", "observed_on")

# raw tier -> (tier, community, price_basis)
TIER_MAP: dict[str, tuple[str, bool, str]] = {
    "on_demand": ("on_demand", False, "list"),
    "on_demand_from": ("on_demand", False, "from"),
    "on_demand_secure": ("on_demand", False, "list"),
    "on_demand_community": ("on_demand", True, "list"),
    "on_demand_secure_api": ("on_demand", False, "lowest_now"),
    "on_demand_community_api": ("on_demand", True, "lowest_now"),
    "on_demand_gpu_component": ("on_demand", False, "list"),  # CoreWeave Classic: GPU component only
    "spot": ("spot", False, "list"),
    "preemptible": ("spot", False, "list"),
    "preemptible_from": ("spot", False, "from"),
    # Marketplace (Vast.ai) observations: independent hosts, so community prices.
    "on_demand_marketplace": ("on_demand", True, "list"),
    "on_demand_marketplace_lowest": ("on_demand", True, "lowest_now"),
    "spot_marketplace": ("spot", True, "list"),
}
NOT_PLACEABLE = {
    "on_demand_via_primeintellect": "reseller price (via Prime Intellect), not the provider's own list price",
}


# An observations file cites public prices one by one (the bundled one: ~230 rows); a file far
# beyond that is a dump for another command, refused at once rather than run out of memory.
MAX_ROWS = 100_000
MAX_FILE_BYTES = 20_000_000


class ObservationsFileError(ValueError):
    """The file is not an observations CSV (missing columns, not CSV)."""


def _read_records(path: Path) -> tuple[list[dict], list[str]]:
    """The file's CSV records and its column names; the whole file refused (one line) when it is
    too large, not UTF-8 text, lacks a required column or is not readable CSV."""
    try:
        size = Path(path).stat().st_size
    except OSError as exc:
        raise ObservationsFileError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if size > MAX_FILE_BYTES:
        raise ObservationsFileError(
            f"{path}: {size / 1e6:,.1f} MB, more than the {MAX_FILE_BYTES / 1e6:,.0f} MB an observations file"
            f" may have (at most {MAX_ROWS:,} rows); split it"
        )
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ObservationsFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ObservationsFileError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if "\x00" in text:
        raise ObservationsFileError(f"{path}: not a CSV text file (it contains NUL bytes)")
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ObservationsFileError(
            f"{path}: missing column(s) {', '.join(missing)}; expected at least {', '.join(REQUIRED_COLUMNS)}"
        )
    records: list[dict] = []
    try:
        for record in reader:
            records.append(record)
            if len(records) > MAX_ROWS:
                raise ObservationsFileError(
                    f"{path}: more than {MAX_ROWS:,} rows, the most an observations file may have; split it"
                )
    except csv.Error as exc:  # a runaway quoted field, a NUL: nothing is imported from such a file
        raise ObservationsFileError(
            f"{path}: not a readable CSV file (line {reader.line_num}: {exc})"
        ) from None
    return records, list(reader.fieldnames or [])


def load_observations(path: Path) -> tuple[pd.DataFrame, list[tuple[str, str, str]]]:
    """Read an observations CSV: (price_snapshots-shaped frame, [(provider, raw row, reason)])."""
    from gpuprice.scrapers.gpu_names import normalize_gpu

    records, fieldnames = _read_records(path)
    rows: list[dict] = []
    quarantined: list[tuple[str, str, str]] = []
    first_row: dict[tuple, int] = {}  # natural key -> the line that gave it first
    for line_no, rec in enumerate(records, start=2):
        raw = ",".join(str(rec.get(c, "")) for c in fieldnames)
        provider = (rec.get("provider") or "").strip().lower()
        column = "provider"  # the cell being read, named in the quarantine reason
        try:
            if provider not in PROVIDERS:
                raise ValueError(f"unknown provider {provider!r}; valid: {', '.join(PROVIDERS)}")
            column = "tier"
            tier_raw = (rec.get("tier") or "").strip().lower()
            if tier_raw in NOT_PLACEABLE:
                raise ValueError(NOT_PLACEABLE[tier_raw])
            if tier_raw not in TIER_MAP:
                raise ValueError(f"unknown tier {tier_raw!r}; valid: {', '.join(TIER_MAP)}")
            tier, community, basis = TIER_MAP[tier_raw]
            column = "usd_per_gpu_hour"
            price = float((rec.get("usd_per_gpu_hour") or "").strip())
            if not 0 < price < 1000:  # also refuses nan and inf
                raise ValueError(f"price {price} outside (0, 1000) USD per GPU-hour")
            check_gpu_hour_floor(price, rec.get("usd_per_gpu_hour"))
            column = "gpu_count"
            count = int((rec.get("gpu_count") or "").strip())
            if not 1 <= count <= 4096:
                raise ValueError(f"gpu_count {count} outside 1..4096")
            column = "observed_on"
            observed = dt.date.fromisoformat((rec.get("observed_on") or "").strip())
            column = "gpu"
            gpu_raw = " ".join((rec.get("gpu") or "").split())
            if not gpu_raw:
                raise ValueError("empty gpu name")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            quarantined.append((provider or "?", raw, f"row {line_no}, column {column}: {exc}"))
            continue
        key = (observed, provider, gpu_raw, count, tier_raw)
        if key in first_row:  # two citations of one offer on one day: the first (file order) stands
            quarantined.append(
                (
                    provider,
                    raw,
                    f"row {line_no}: duplicate of row {first_row[key]} (same provider, gpu, gpu_count,"
                    " tier and observed_on); the first stands",
                )
            )
            continue
        first_row[key] = line_no
        rows.append(
            {
                "snapshot_date": observed,
                "provider": provider,
                "sku": f"{gpu_raw} x{count} [{tier_raw}]",
                "gpu": normalize_gpu(gpu_raw, provider=provider),
                "gpu_raw": gpu_raw,
                "gpu_count": count,
                "tier": tier,
                "community": community,
                "usd_per_gpu_hour": round_price(price),
                "usd_per_instance_hour": None,
                "price_basis": basis,
                "raw_sha256": hashlib.sha256(raw.encode()).hexdigest(),
                "parser_version": PARSER_VERSION,
            }
        )
    return pd.DataFrame(rows), quarantined
