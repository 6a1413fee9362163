"""A small hand-made warehouse for the report tests (imported by test_reports*.py).

Three weeks of daily snapshots for four providers, ending in ISO week 2026-W44
(2026-10-26 .. 2026-11-01), with known price moves, a failing provider, a memory-fit sweep and
rankings for two workloads. One provider name, GPU name and SKU are hostile strings so every
output can be checked for escaping.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb
import pandas as pd

from gpuprice.warehouse.schema import migrate
from gpuprice.warehouse.tables import PROVIDER_RUN_COLUMNS, SNAPSHOT_COLUMNS
from gpuprice.warehouse.views import create_views

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
HOSTILE_PROVIDER = SCRIPT
WEEK = "2026-W44"
WEEK_START = dt.date(2026, 10, 26)
WEEK_END = dt.date(2026, 11, 1)
FIRST_DAY = dt.date(2026, 10, 12)
LAST_DAY = dt.date(2026, 10, 30)  # newest snapshot: Friday of W44
NOW = dt.datetime(2026, 11, 2, 6, 0, tzinfo=dt.UTC)

# (provider, sku, gpu, gpu_raw, gpu_count, tier, community, commitment, base price)
OFFERS: list[tuple] = [
    ("runpod", "H100 SXM", "h100-sxm", "H100 SXM", 1, "on_demand", False, None, 2.69),
    ("runpod", "H100 SXM", "h100-sxm", "H100 SXM", 1, "on_demand", True, None, 2.39),
    ("runpod", "H100 SXM", "h100-sxm", "H100 SXM", 1, "spot", False, None, 1.75),
    ("runpod", "A100 SXM", "a100-80gb-sxm", "A100 SXM 80GB", 1, "on_demand", False, None, 1.49),
    ("runpod", "L40S", "l40s", "L40S", 1, "on_demand", False, None, 0.86),
    (
        "lambda",
        "gpu_8x_h100_sxm5",
        "h100-sxm",
        "On-demand 8x NVIDIA H100 SXM",
        8,
        "on_demand",
        False,
        None,
        2.99,
    ),
    (
        "lambda",
        "gpu_1x_h100_sxm5",
        "h100-sxm",
        "On-demand 1x NVIDIA H100 SXM",
        1,
        "on_demand",
        False,
        None,
        3.29,
    ),
    ("lambda", "gpu_8x_b200", "b200", "On-demand 8x NVIDIA B200", 8, "on_demand", False, None, 4.99),
    ("coreweave", "HGX H200", "h200-sxm", "NVIDIA HGX H200", 8, "on_demand", False, None, 6.31),
    ("coreweave", "HGX H100", "h100-sxm", "NVIDIA HGX H100", 8, "on_demand", False, None, 6.16),
    ("coreweave", "HGX H100", "h100-sxm", "NVIDIA HGX H100", 8, "reserved", False, 12, 3.10),
    ("nebius", "NVIDIA HGX H200", "h200-sxm", "NVIDIA HGX H200", 8, "on_demand", False, None, 3.50),
    ("nebius", "NVIDIA HGX H100", "h100-sxm", "NVIDIA HGX H100", 8, "on_demand", False, None, 2.95),
    ("nebius", SCRIPT, "h100-sxm", IMG, 1, "on_demand", False, None, 3.05),
    (
        "nebius",
        "Mystery Accelerator",
        "unknown",
        "Mystery Accelerator 9000",
        1,
        "on_demand",
        False,
        None,
        1.11,
    ),
    (HOSTILE_PROVIDER, IMG, "h100-sxm", SCRIPT, 1, "on_demand", False, None, 2.59),
]

# (provider, sku, tier, community, from_date, new price): price moves.
MOVES: list[tuple] = [
    ("lambda", "gpu_8x_h100_sxm5", "on_demand", False, dt.date(2026, 10, 28), 3.29),  # +10.0 % in W44
    ("nebius", "NVIDIA HGX H200", "on_demand", False, dt.date(2026, 10, 27), 3.15),  # -10.0 % in W44
    ("runpod", "L40S", "on_demand", False, dt.date(2026, 10, 29), 0.79),  # -8.1 % in W44
    ("runpod", "H100 SXM", "on_demand", False, dt.date(2026, 10, 20), 2.49),  # W43: not this week
    (HOSTILE_PROVIDER, IMG, "on_demand", False, dt.date(2026, 10, 29), 2.19),  # hostile strings in changes
]

# v100 is swept but nobody offers it: the verdict leaves it out.
GPUS = [
    ("v100", 32.0),
    ("l40s", 48.0),
    ("a100-80gb-sxm", 80.0),
    ("h100-sxm", 80.0),
    ("h200-sxm", 141.0),
    ("b200", 180.0),
]


def _insert(con: duckdb.DuckDBPyConnection, table: str, columns: list[str], rows: list[list]) -> None:
    """Bulk insert through a DataFrame (row-by-row executemany is slow in DuckDB)."""
    frame = pd.DataFrame(rows, columns=columns)
    con.register("_rows", frame)
    try:
        con.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(columns)} FROM _rows")
    finally:
        con.unregister("_rows")


def _price(offer: tuple, day: dt.date) -> float:
    provider, sku, _, _, _, tier, community, _, price = offer
    for m_provider, m_sku, m_tier, m_comm, since, new in MOVES:
        if (m_provider, m_sku, m_tier, m_comm) == (provider, sku, tier, community) and day >= since:
            price = new
    return price


def _days() -> list[dt.date]:
    return [FIRST_DAY + dt.timedelta(days=i) for i in range((LAST_DAY - FIRST_DAY).days + 1)]


def insert_snapshots(con: duckdb.DuckDBPyConnection) -> None:
    rows = []
    for day in _days():
        for offer in OFFERS:
            provider, sku, gpu, gpu_raw, count, tier, community, months, _ = offer
            rows.append(
                [
                    day,
                    provider,
                    sku,
                    gpu,
                    gpu_raw,
                    count,
                    None,
                    tier,
                    community,
                    months,
                    None,
                    _price(offer, day),
                    None,
                    None,
                    None,
                    None,
                    True,
                    None,
                    "archive",
                    None,
                    "test",
                    NOW,
                    "list",
                ]
            )
    # Crusoe: scraped until 2026-10-22, then its page broke (stale by the end of W44).
    for day in _days():
        if day <= dt.date(2026, 10, 22):
            rows.append(
                [
                    day,
                    "crusoe",
                    "H100 HGX",
                    "h100-sxm",
                    "NVIDIA H100",
                    1,
                    80.0,
                    "on_demand",
                    False,
                    None,
                    None,
                    3.90,
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    "archive",
                    None,
                    "test",
                    NOW,
                    "list",
                ]
            )
    # Public reports are history only, even one dated on a scrape day with a lower price.
    rows.append(
        [
            dt.date(2026, 9, 1),
            "lambda",
            "H100 SXM public",
            "h100-sxm",
            "H100 SXM",
            1,
            None,
            "on_demand",
            False,
            None,
            None,
            3.49,
            None,
            None,
            None,
            None,
            None,
            None,
            "public_report",
            None,
            None,
            NOW,
            "list",
        ]
    )
    rows.append(
        [
            LAST_DAY,
            "runpod",
            "L40S blog",
            "l40s",
            "L40S",
            1,
            None,
            "on_demand",
            False,
            None,
            None,
            0.10,
            None,
            None,
            None,
            None,
            None,
            None,
            "public_report",
            None,
            None,
            NOW,
            "list",
        ]
    )
    columns = list(SNAPSHOT_COLUMNS[: len(rows[0])])  # the rows give the leading columns, in order
    _insert(con, "price_snapshots", columns, rows)


def insert_runs(con: duckdb.DuckDBPyConnection) -> None:
    rows = []
    for day in _days():
        for provider in ("runpod", "lambda", "coreweave", "nebius", "crusoe"):
            failed = provider == "crusoe" and day > dt.date(2026, 10, 22)
            rows.append(
                [
                    day,
                    provider,
                    "archive",
                    "failed" if failed else "success",
                    0 if failed else 5,
                    0,
                    0,
                    "crusoe: no price structure found: pricing cards" if failed else None,
                    None,
                    NOW,
                    NOW,
                ]
            )
    columns = list(PROVIDER_RUN_COLUMNS[: len(rows[0])])  # the rows give the leading columns, in order
    _insert(con, "provider_runs", columns, rows)


def insert_dim_gpu(con: duckdb.DuckDBPyConnection) -> None:
    con.executemany(
        "INSERT INTO dim_gpu (slug, vendor, architecture, memory_gb, form_factor) VALUES (?, 'nvidia', 'x', ?, 'sxm')",
        [[slug, memory] for slug, memory in GPUS],
    )


def insert_memory_fit(con: duckdb.DuckDBPyConnection) -> None:
    """Two workloads: a QLoRA run that fits one 80 GB GPU, a full fine-tune that needs 8 big GPUs."""
    rows = []
    needs = {  # workload -> (gpu_count, sharding) -> per-GPU GB before the 20 % margin
        "llama-3.1-70b-qlora": {(1, "none"): 52.5, (2, "fsdp"): 30.0, (8, "fsdp"): 12.0},
        "llama-3.1-8b-full": {
            (1, "none"): 150.0,
            (1, "offload"): 35.0,
            (2, "zero3"): 80.0,
            (8, "zero2"): 60.0,
            (8, "zero3"): 45.0,
            (16, "zero3"): 24.0,
        },
    }
    for workload, setups in needs.items():
        for gpu, memory in GPUS:
            simplest_done: set[int] = set()
            for (count, sharding), per_gpu in sorted(
                setups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "zero2")
            ):
                # As fit_sweep stores them (models/memory.py): planning = peak / (1 - margin) at the
                # default 20 % margin, fits = at least the margin free, headroom = card - peak.
                planning = per_gpu / 0.8
                fits = memory - per_gpu >= 0.2 * memory
                least = fits and count not in simplest_done
                if least:
                    simplest_done.add(count)
                rows.append(
                    [
                        workload,
                        gpu,
                        count,
                        sharding,
                        per_gpu,
                        planning,
                        memory,
                        fits,
                        memory - per_gpu,
                        least,
                        NOW,
                    ]
                )
    columns = [
        "workload",
        "gpu",
        "gpu_count",
        "sharding",
        "per_gpu_gb",
        "planning_gb",
        "gpu_memory_gb",
        "fits",
        "headroom_gb",
        "least_complex",
        "computed_at",
    ]
    _insert(con, "memory_fit", columns, rows)


def cost_terms(price: float, count: int, hours: float, *, spot: bool) -> dict:
    """A cost_terms JSON object shaped like models/ranking/cost_terms.py writes it (amounts, hours, facts)."""
    startup, rework = 0.6, (0.1 * hours if spot else 0.0)
    amounts = {
        "gpu_usd": price * count * hours,
        "orchestration_usd": price * count * startup,
        "rework_usd": price * count * rework,
        "storage_usd": 1.2,
        "data_usd": 0.6,
        "engineer_usd": 0.0,
        "reusable_value_usd": 0.0,
    }
    total = sum(amounts.values())
    return {
        **{k: round(v, 2) for k, v in amounts.items()},
        "total_usd": round(total, 2),
        "checkpoints": 10,
        "compute_hours": hours,
        "orchestration_hours": startup,
        "rework_hours": rework,
        "wall_hours": hours + startup + rework,
        "expected_interruptions": 0.7 if spot else 0.002,
        "checkpoint_gb": 2.5,
        "dataset_gb": 0.2,
        "model_download_gb": 141.1,
        "assumptions": {"storage_usd_per_gb_month": 0.02},
    }


# (workload, provider, sku, gpu, count, tier, community, price, hours, warnings)
RANKED: list[tuple] = [
    ("llama-3.1-70b-qlora", "runpod", "A100 SXM", "a100-80gb-sxm", 1, "on_demand", False, 1.49, 30.0, []),
    (
        "llama-3.1-70b-qlora",
        "runpod",
        "H100 SXM",
        "h100-sxm",
        1,
        "on_demand",
        True,
        2.39,
        14.0,
        ["community-host: marketplace host without an SLA"],
    ),
    ("llama-3.1-70b-qlora", "nebius", SCRIPT, "h100-sxm", 1, "on_demand", False, 3.05, 14.0, [SCRIPT]),
    ("llama-3.1-70b-qlora", HOSTILE_PROVIDER, IMG, "h100-sxm", 1, "on_demand", False, 2.19, 14.0, [IMG]),
    (
        "llama-3.1-70b-qlora",
        "runpod",
        "H100 SXM",
        "h100-sxm",
        1,
        "spot",
        False,
        1.75,
        14.0,
        ["spot: preemptible, checkpoint often"],
    ),
    ("llama-3.1-70b-qlora", "lambda", "gpu_1x_h100_sxm5", "h100-sxm", 1, "on_demand", False, 3.29, 14.0, []),
    (
        "llama-3.1-70b-qlora",
        "lambda",
        "gpu_8x_b200",
        "b200",
        8,
        "on_demand",
        False,
        4.99,
        1.2,
        ["oversized: 8 GPUs for a job that fits on one"],
    ),
    ("llama-3.1-8b-full", "nebius", "NVIDIA HGX H200", "h200-sxm", 8, "on_demand", False, 3.15, 20.0, []),
    ("llama-3.1-8b-full", "coreweave", "HGX H200", "h200-sxm", 8, "on_demand", False, 6.31, 20.0, []),
    ("llama-3.1-8b-full", "lambda", "gpu_8x_b200", "b200", 8, "on_demand", False, 4.99, 12.0, []),
]


def _throughput_band(
    workload: str, gpu: str, price: float, count: int, hours: float, spot: bool
) -> list[float]:
    """hours_low/high and total_cost_low/high_usd as the ranking stores them: the one band rule
    (models/throughput_band.py) for the workload's method on the GPU, the costs at those hours."""
    from gpuprice.models.throughput_band import gpu_speed_band

    short, long = gpu_speed_band(workload.rsplit("-", 1)[-1], gpu).hours(hours)
    costs = [cost_terms(price, count, h, spot=spot)["total_usd"] for h in (short, long)]
    return [short, long, *costs]


def insert_rankings(con: duckdb.DuckDBPyConnection, snapshot: dt.date = LAST_DAY) -> None:
    rows = []
    for workload, provider, sku, gpu, count, tier, community, price, hours, warnings in RANKED:
        terms = cost_terms(price, count, hours, spot=tier == "spot")
        per_checkpoint = terms["total_usd"] / terms["checkpoints"]
        rows.append(
            (
                workload,
                per_checkpoint,
                provider,
                sku,
                gpu,
                count,
                tier,
                community,
                price,
                hours,
                price * count * hours,
                json.dumps(terms),
                warnings,
            )
        )
    ranked: dict[str, int] = {}
    values = []
    for (
        workload,
        per_checkpoint,
        provider,
        sku,
        gpu,
        count,
        tier,
        community,
        price,
        hours,
        run,
        terms,
        warnings,
    ) in sorted(rows, key=lambda r: (r[0], r[1])):
        ranked[workload] = ranked.get(workload, 0) + 1
        values.append(
            [
                snapshot,
                workload,
                ranked[workload],
                provider,
                sku,
                gpu,
                count,
                1,
                tier,
                community,
                None,
                "list",
                price,
                "zero3" if count > 1 else "none",
                40.0,
                900.0,
                0.38,
                hours,
                run,
                per_checkpoint,
                terms,
                warnings,
                snapshot,
                NOW,
                *_throughput_band(workload, gpu, price, count, hours, tier == "spot"),
            ]
        )
    columns = [
        "snapshot_date",
        "workload",
        "rank",
        "provider",
        "sku",
        "gpu",
        "gpu_count",
        "nodes",
        "tier",
        "community",
        "commitment_months",
        "price_basis",
        "usd_per_gpu_hour",
        "sharding",
        "per_gpu_gb",
        "tokens_per_sec_per_gpu",
        "mfu",
        "hours",
        "run_cost_usd",
        "cost_per_checkpoint_usd",
        "cost_terms",
        "warnings",
        "price_snapshot_date",
        "computed_at",
        "hours_low",
        "hours_high",
        "total_cost_low_usd",
        "total_cost_high_usd",
    ]
    _insert(con, "workload_rankings", columns, values)


CATALOG_NAMES = ("llama-3.1-70b-qlora", "llama-3.1-8b-full", "budget-lora-experiment")


def catalog() -> dict:
    """The two workloads the warehouse has output for, plus one catalog workload without any."""
    from gpuprice.models.workloads import load_workloads

    found = {w.name: w for w in load_workloads()}
    return {name: found[name] for name in CATALOG_NAMES}


def build_warehouse(path: Path, *, rankings: bool = True) -> Path:
    """Create the hand-made warehouse at ``path`` (schema migrated, analytics views created)."""
    con = duckdb.connect(str(path))
    try:
        migrate(con)
        create_views(con)
        insert_dim_gpu(con)
        insert_snapshots(con)
        insert_runs(con)
        insert_memory_fit(con)
        if rankings:
            insert_rankings(con)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path
