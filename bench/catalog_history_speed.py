"""Time per year of history of ``gpuprice import-history skypilot-catalog``, on a synthetic catalog.

The real repository (github.com/skypilot-org/skypilot-catalog, ~1.8 GB of history) could not be
brought to the measuring machine, so this builds a repository of the same shape with
``git fast-import``: per day a few commits touching ``catalogs/v7/<cloud>/vms.csv``, the files
in the real layout and at about the real sizes (AWS: ~32,000 rows, ~2.2 MB, spot prices changing
every day; Azure ~4,000 rows; Lambda, RunPod, Vast.ai, OCI small and changing every few days).
Rows and prices are generated here. The import runs as a subprocess in a fresh GPUPRICE_HOME
(wall time and peak RSS); a second run of the same range measures the idempotent re-run.

    .venv/bin/python -m bench.catalog_history_speed [DAYS] [COMMITS_PER_DAY]
"""

from __future__ import annotations

import datetime as dt
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.end_to_end import _clean_env, measure_process

START = dt.date(2025, 1, 1)
AWS_REGIONS = [
    f"{geo}-{n}"
    for geo in (
        "us-east",
        "us-west",
        "eu-west",
        "eu-central",
        "ap-northeast",
        "ap-south",
        "ap-southeast",
        "ca-central",
        "sa-east",
        "eu-north",
    )
    for n in (1, 2)
]  # 20 regions
# instance type, accelerator, count, memory MiB per GPU ("" = CPU)
AWS_GPU = [
    ("p5.48xlarge", "H100", 8, 81920),
    ("p5e.48xlarge", "H200", 8, 144384),
    ("p4d.24xlarge", "A100", 8, 40960),
    ("p4de.24xlarge", "A100-80GB", 8, 81920),
    ("p3.2xlarge", "V100", 1, 16384),
    ("p3.8xlarge", "V100", 4, 16384),
    ("p3.16xlarge", "V100", 8, 16384),
    ("p3dn.24xlarge", "V100-32GB", 8, 32768),
    *[
        (f"g4dn.{s}", "T4", c, 16384)
        for s, c in (
            ("xlarge", 1),
            ("2xlarge", 1),
            ("4xlarge", 1),
            ("8xlarge", 1),
            ("12xlarge", 4),
            ("16xlarge", 1),
            ("metal", 8),
        )
    ],
    *[
        (f"g5.{s}", "A10G", c, 24576)
        for s, c in (
            ("xlarge", 1),
            ("2xlarge", 1),
            ("4xlarge", 1),
            ("8xlarge", 1),
            ("12xlarge", 4),
            ("16xlarge", 1),
            ("24xlarge", 4),
            ("48xlarge", 8),
        )
    ],
    *[
        (f"g6.{s}", "L4", c, 23034)
        for s, c in (
            ("xlarge", 1),
            ("2xlarge", 1),
            ("4xlarge", 1),
            ("8xlarge", 1),
            ("12xlarge", 4),
            ("16xlarge", 1),
            ("24xlarge", 4),
            ("48xlarge", 8),
        )
    ],
    *[
        (f"g6e.{s}", "L40S", c, 46068)
        for s, c in (("xlarge", 1), ("2xlarge", 1), ("12xlarge", 4), ("48xlarge", 8))
    ],
    *[
        (f"inf2.{s}", "Inferentia2", c, 32768)
        for s, c in (("xlarge", 1), ("8xlarge", 1), ("24xlarge", 6), ("48xlarge", 12))
    ],
]
AWS_CPU_TYPES = [
    f"{fam}{gen}{suffix}.{size}"
    for fam in ("c", "m", "r", "x", "i", "t", "z")
    for gen, suffix in ((5, ""), (5, "a"), (5, "d"), (6, "i"), (6, "g"), (6, "a"), (7, "g"), (7, "i"))
    for size in (
        "large",
        "xlarge",
        "2xlarge",
        "4xlarge",
        "8xlarge",
        "12xlarge",
        "16xlarge",
        "24xlarge",
        "metal",
    )
]  # 504 CPU types x 20 regions x 3 zones: ~30,000 rows (the real AWS file: ~2.4 MB)


def _info(name: str, count: int, mib: int) -> str:
    return f"\"{{'Gpus': [{{'Name': '{name}', 'Manufacturer': 'NVIDIA', 'Count': {count}, 'MemoryInfo': {{'SizeInMiB': {mib}}}}}], 'TotalGpuMemoryInMiB': {mib * count}}}\""


def aws_csv(rng: random.Random, day: int) -> str:
    lines = [
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"
    ]
    for i, itype in enumerate(AWS_CPU_TYPES):
        base = 0.05 * (1 + i % 9) * (1 + i // 9 % 4)
        for region in AWS_REGIONS:
            for az in range(1, 4):
                spot = base * rng.uniform(0.2, 0.5)
                lines.append(
                    f"{itype},,,{2 * (1 + i % 9)}.0,{8 * (1 + i % 9)}.0,,{base:.4f},{spot:.6f},{region},{region[:4]}-az{az}"
                )
    for itype, acc, count, mib in AWS_GPU:
        base = {
            "H100": 12.29,
            "H200": 14.0,
            "A100": 4.1,
            "A100-80GB": 5.1,
            "V100": 3.06,
            "V100-32GB": 3.9,
        }.get(acc, 0.9) * count
        for region in AWS_REGIONS:
            for az in range(1, 3):
                spot = base * rng.uniform(0.3, 0.6) * (1 + 0.01 * (day % 7))
                lines.append(
                    f"{itype},{acc},{count}.0,{8 * count}.0,{16 * count}.0,{_info(acc, count, mib)},{base:.4f},{spot:.6f},{region},{region[:4]}-az{az}"
                )
    return "\n".join(lines) + "\n"


def azure_csv(rng: random.Random, day: int) -> str:
    lines = [
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation"
    ]
    regions = [
        "eastus",
        "eastus2",
        "westus2",
        "westus3",
        "northeurope",
        "westeurope",
        "southcentralus",
        "japaneast",
    ]
    gpu = [
        ("Standard_ND96isr_H100_v5", "H100", 8),
        ("Standard_ND96amsr_A100_v4", "A100-80GB", 8),
        ("Standard_NC24ads_A100_v4", "A100-80GB", 1),
        ("Standard_NC6s_v3", "V100", 1),
        ("Standard_NC4as_T4_v3", "T4", 1),
        ("Standard_NV6ads_A10_v5", "A10", 0.166),
    ]
    for i in range(450):
        for region in regions:
            lines.append(
                f"Standard_D{i}s_v5,,,{2 + i % 64}.0,{8 + i % 256},,{0.05 + i * 0.01:.4f},{0.01 + i * 0.002:.5f},{region},V1"
            )
    for itype, acc, count in gpu:
        for region in regions:
            price = {"H100": 98.32, "A100-80GB": 32.77, "V100": 3.06, "T4": 0.526}.get(acc, 0.45)
            lines.append(
                f"{itype},{acc},{count},{8},{56},,{price},{price * rng.uniform(0.3, 0.5):.5f},{region},V2"
            )
    return "\n".join(lines) + "\n"


def small_csv(cloud: str, version: int) -> str:
    if cloud == "lambda":
        rows = [
            f"gpu_{n}x_h100_sxm5,H100,{n}.0,{26 * n}.0,{225 * n}.0,{(2.99 - 0.01 * version) * n:.2f},{r},,"
            for n in (1, 2, 4, 8)
            for r in ("us-east-1", "us-west-1", "us-south-1", "europe-central-1")
        ]
        return (
            "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
            + "\n".join(rows)
            + "\n"
        )
    if cloud == "runpod":
        rows = [
            f"{n}x_{g}_SECURE,{g},{n}.0,{8 * n}.0,{80 * n}.0,{g},US,{1.2 * n:.2f},{(p + 0.01 * version) * n:.2f},US-TX-{z}"
            for g, p in (("H100-SXM", 2.69), ("A100-80GB", 1.64), ("RTX4090", 0.69))
            for n in (1, 2, 4, 8)
            for z in range(1, 6)
        ]
        return (
            "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,SpotPrice,Price,AvailabilityZone\n"
            + "\n".join(rows)
            + "\n"
        )
    if cloud == "vast":
        rows = [
            f'{n}x-{g}-32-65536,{a},{n},32,64.0,"{{}}",{(p + 0.02 * version) * n:.2f},0.00,"{r}"'
            for g, a, p in (("H100_SXM", "H100", 1.8), ("RTX_4090", "RTX4090", 0.4))
            for n in (1, 2, 4, 8)
            for r in ("Texas, US, NA", "Germany, DE, EU")
        ]
        return (
            "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"
            + "\n".join(rows)
            + "\n"
        )
    rows = [
        f"BM.GPU.H100.8,H100,8,112,2048,\"{{'Gpus': [{{'Name': '8x NVIDIA H100', 'GpuMemory': 640}}]}}\",{80 - version % 3},,{r},AD-1"
        for r in ("us-ashburn-1", "eu-frankfurt-1")
    ]
    return (
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone\n"
        + "\n".join(rows)
        + "\n"
    )


def build_repo(path: Path, days: int, commits_per_day: int) -> float:
    """A bare repository of ``days`` days of catalog commits (git fast-import); seconds taken."""
    started = time.monotonic()
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    rng = random.Random(7)
    proc = subprocess.Popen(["git", "--git-dir", str(path), "fast-import", "--quiet"], stdin=subprocess.PIPE)
    assert proc.stdin is not None
    write = proc.stdin.write
    for d in range(days):
        day = START + dt.timedelta(days=d)
        for c in range(commits_per_day):
            files = {"catalogs/v7/aws/vms.csv": aws_csv(rng, d)}
            if c == 0:
                files["catalogs/v7/azure/vms.csv"] = azure_csv(rng, d // 3)
                for cloud, every in (("lambda", 30), ("runpod", 2), ("vast", 1), ("oci", 60)):
                    files[f"catalogs/v7/{cloud}/vms.csv"] = small_csv(cloud, d // every)
            stamp = int(dt.datetime.combine(day, dt.time(2 + 20 * c // commits_per_day), dt.UTC).timestamp())
            message = b"Update catalogs\n"
            write(b"commit refs/heads/main\n")
            write(f"committer bot <bot@example.invalid> {stamp} +0000\n".encode())
            write(f"data {len(message)}\n".encode() + message)
            for fpath, text in files.items():
                data = text.encode()
                write(f"M 100644 inline {fpath}\n".encode())
                write(f"data {len(data)}\n".encode() + data + b"\n")
    proc.stdin.close()
    if proc.wait() != 0:
        raise RuntimeError("git fast-import failed")
    subprocess.run(["git", "--git-dir", str(path), "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    return time.monotonic() - started


def main(days: int = 365, commits_per_day: int = 3) -> None:
    with tempfile.TemporaryDirectory(prefix="gpuprice-catalog-bench-") as tmp:
        repo = Path(tmp) / "skypilot-catalog.git"
        built = build_repo(repo, days, commits_per_day)
        size = sum(f.stat().st_size for f in repo.rglob("*") if f.is_file()) / 1e6
        print(f"built {days} days x {commits_per_day} commits in {built:.0f} s ({size:.0f} MB packed)")
        home = Path(tmp) / "home"
        home.mkdir()
        cmd = [sys.executable, "-m", "gpuprice", "import-history", "skypilot-catalog", "--repo", str(repo)]
        for label in ("first import", "same range again"):
            stats = measure_process(cmd, env=_clean_env(home), cwd=Path(tmp))
            print(
                f"{label}: {stats.wall_s:.1f} s wall ({stats.wall_s / days * 365:.1f} s per year of history),"
                f" peak RSS {stats.peak_rss_mb:.0f} MB, exit {stats.returncode}"
            )
            print("   " + stats.stderr_tail.strip().splitlines()[-1] if stats.stderr_tail.strip() else "")
        rows = subprocess.run(
            [
                sys.executable,
                "-m",
                "gpuprice",
                "sql",
                "select count(*) from price_snapshots",
                "--format",
                "csv",
            ],
            env=_clean_env(home),
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()
        print(
            f"rows stored: {rows[-1] if rows else '?'}; warehouse {((home / 'warehouse.duckdb').stat().st_size / 1e6):.0f} MB"
        )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
