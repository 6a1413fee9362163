"""gpuprice import-history skypilot-catalog: a catalog's git history -> dated catalog_history rows.

Every test builds its own small git repository in a temporary folder, in the layout of
SkyPilot's catalog repository (github.com/skypilot-org/skypilot-catalog: ``catalogs/v<N>/<cloud>/
vms.csv``, headers as in ``catalogs/v7/lambda/vms.csv``, ``catalogs/v7/runpod/vms.csv``,
``catalogs/v7/vast/vms.csv``, ``catalogs/v7/aws/vms.csv``; column order differs per cloud). The
rows and prices are written here; no network is used (a URL is a file:// URL).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import duckdb
import pytest

LAMBDA_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"
RUNPOD_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,SpotPrice,Price,AvailabilityZone"
AWS_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"
VAST_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region"
DAYS = [dt.date(2025, 3, 1) + dt.timedelta(days=i) for i in range(4)]


def _gpu_info(name: str, count: int, mib: int) -> str:
    return f"\"{{'Gpus': [{{'Name': '{name}', 'Count': {count}, 'MemoryInfo': {{'SizeInMiB': {mib}}}}}], 'TotalGpuMemoryInMiB': {mib}}}\""


def lambda_csv(h100_instance_price: float) -> str:
    return "\n".join(
        [
            LAMBDA_HEADER,
            "cpu_4x_general,,,4.0,16.0,0.2,us-east-1,,",
            f"gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,{h100_instance_price},us-east-1,{_gpu_info('H100', 8, 81920)},",
            f"gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,{h100_instance_price},us-west-1,{_gpu_info('H100', 8, 81920)},",
            f"gpu_1x_a100_sxm4,A100,1.0,30.0,200.0,1.29,us-east-1,{_gpu_info('A100', 1, 40960)},",
            f"gpu_1x_rtx6000,RTX6000,1.0,14.0,46.0,0.5,us-east-1,{_gpu_info('RTX6000', 1, 24576)},",
            "",
        ]
    )


def runpod_csv(spot: str = "2.00") -> str:
    return "\n".join(
        [
            RUNPOD_HEADER,
            f"1x_H100-SXM_SECURE,H100-SXM,1.0,16.0,80.0,H100-SXM,US,{spot},2.69,US-TX-1",
            "1x_H100-SXM_SECURE,H100-SXM,1.0,16.0,80.0,H100-SXM,US,1.80,2.69,US-TX-2",
            "1x_A100-80GB_SECURE,A100-80GB,1.0,8.0,80.0,A100-80GB,CA,,1.64,CA-MTL-1",
            "",
        ]
    )


AWS_CSV = "\n".join(
    [
        AWS_HEADER,
        "m5.large,,,2.0,8.0,,0.096,0.04,us-east-1,use1-az1",
        f"p5.48xlarge,H100,8.0,192.0,2048.0,{_gpu_info('H100', 8, 81920)},98.32,30.10,us-east-1,use1-az2",
        f"p3.2xlarge,V100,1.0,8.0,61.0,{_gpu_info('V100', 1, 16384)},3.06,0.95,us-east-1,use1-az2",
        "g5.xlarge,A10G,1.0,4.0,16.0,,1.006,0.40,us-east-1,use1-az2",
        "Standard_fraction,A10,0.5,6.0,55.0,,0.45,,us-east-1,use1-az2",
        "",
    ]
)
VAST_CSV = "\n".join(
    [
        VAST_HEADER,
        f'2x-H100_NVL-32-65536,H100,2,32,64.0,{_gpu_info("H100", 2, 191660)},4.53,0.00,"California, US, NA"',
        f'4x-A100_SXM4-32-65536,A100,4,32,64.0,{_gpu_info("A100", 4, 163840)},2.93,0.00,"Slovenia, SI, EU"',
        "",
    ]
)


def _git(repo: Path, *args: str, when: dt.datetime | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent)}
    if when is not None:
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S+0000")
        env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    return subprocess.run(
        ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True
    ).stdout


def commit(repo: Path, files: dict[str, str], when: dt.datetime, message: str = "Update catalogs") -> None:
    for path, text in files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", message, when=when)


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    _git(path, "config", "user.email", "catalog@example.invalid")
    _git(path, "config", "user.name", "catalog bot")
    return path


def import_then_drop_offers(cli, repo_dir: Path):
    """One day imported from a catalog repo, then a later commit of that day keeps only the first
    two offers (the H100 ones): the re-import's CLI result (the day is pruned)."""
    repo = init_repo(repo_dir)
    morning = dt.datetime(2025, 3, 1, 6)
    commit(repo, {"catalogs/v7/runpod/vms.csv": runpod_csv()}, morning)
    assert cli("import-history", "skypilot-catalog", "--repo", str(repo)).code == 0
    only_h100 = "\n".join(runpod_csv().splitlines()[:3]) + "\n"
    commit(repo, {"catalogs/v7/runpod/vms.csv": only_h100}, morning + dt.timedelta(hours=8))
    return cli("import-history", "skypilot-catalog", "--repo", str(repo))


@pytest.fixture
def catalog_repo(tmp_path: Path) -> Path:
    """Four days; two commits on day 2 (the later one wins); a gcp file gpuprice does not track;
    an old-layout v6 lambda file beside v7 (v7 is read)."""
    repo = init_repo(tmp_path / "skypilot-catalog")
    prices = [23.92, 23.92, 19.92, 17.92]  # day 2 repeats day 1: a day whose lambda file is unchanged
    for day, price in zip(DAYS, prices, strict=True):
        at = dt.datetime.combine(day, dt.time(6, 0))
        files = {
            "catalogs/v7/lambda/vms.csv": lambda_csv(price),
            "catalogs/v6/lambda/vms.csv": lambda_csv(99.0),
            "catalogs/v7/runpod/vms.csv": runpod_csv(),
            "catalogs/v7/aws/vms.csv": AWS_CSV,
            "catalogs/v7/vast/vms.csv": VAST_CSV,
            "catalogs/v7/gcp/vms.csv": "not,a,tracked,cloud\n",
        }
        commit(repo, files, at)
        if day == DAYS[1]:
            # A later commit the same day: its runpod spot price is the day's.
            commit(repo, {"catalogs/v7/runpod/vms.csv": runpod_csv("1.50")}, at + dt.timedelta(hours=12))
    # Not a catalog commit (README): does not create a day.
    commit(repo, {"README.md": "catalog\n"}, dt.datetime.combine(DAYS[-1] + dt.timedelta(days=2), dt.time(1)))
    return repo


def rows(home: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


CATALOG_ROWS = """SELECT provider, sku, gpu, gpu_count, tier, community, region, price_basis,
    CAST(usd_per_gpu_hour AS DOUBLE), CAST(usd_per_instance_hour AS DOUBLE), snapshot_date, observed_on,
    source, source_file, raw_sha256, parser_version
    FROM price_snapshots WHERE source = 'catalog_history' ORDER BY ALL"""


def test_import_loads_dated_rows_with_provenance(home: Path, cli, catalog_repo: Path) -> None:
    result = cli("import-history", "skypilot-catalog", "--repo", str(catalog_repo))
    assert result.code == 0, result.err
    assert "4 days" in result.out and "quarantined" in result.out
    assert "days 4/4" in result.err and "ETA" in result.err  # progress on stderr
    got = rows(home, CATALOG_ROWS)
    days = sorted({r[11] for r in got})
    assert days == DAYS  # one observation per day with a commit; the README-only day adds none
    assert all(r[10] == r[11] for r in got)  # snapshot date = observed_on = the commit's UTC date
    providers = {r[0] for r in got}
    assert providers == {"lambda", "runpod", "aws", "vastai"}  # gcp is not a gpuprice provider
    log = _git(catalog_repo, "log", "--format=%H %cs", "--", "catalogs/").split("\n")
    last_of_day: dict[str, str] = {}
    for line in reversed([x for x in log if x]):
        sha, day = line.split()
        last_of_day[day] = sha  # oldest first: the last assignment is the day's newest commit
    for r in got:
        sha, _, path = r[13].partition("@")[2].partition(":")
        assert r[13].startswith("skypilot-catalog@")
        assert sha == last_of_day[r[11].isoformat()]
        assert path == f"catalogs/v7/{ {'vastai': 'vast'}.get(r[0], r[0]) }/vms.csv"
        assert len(r[14]) == 64 and r[15] == "skypilot-catalog/1"
    lam = {(r[11], r[6]): r[8] for r in got if r[0] == "lambda" and r[2] == "h100-sxm"}
    assert lam[(DAYS[0], "us-east-1")] == pytest.approx(23.92 / 8)  # instance price / GPU count
    assert lam[(DAYS[2], "us-west-1")] == pytest.approx(19.92 / 8)
    # Lambda's bare A100 with 40 GB is the 40 GB card; runpod's bare "A100-80GB" is the PCIe card.
    assert {r[2] for r in got if r[0] == "lambda"} == {"h100-sxm", "a100-40gb"}
    assert {r[2] for r in got if r[0] == "runpod"} == {"h100-sxm", "a100-80gb-pcie"}
    # Zones collapse to the region's cheapest; the later commit of day 2 is the one read.
    spot = {r[11]: r[8] for r in got if r[0] == "runpod" and r[4] == "spot"}
    assert spot[DAYS[0]] == pytest.approx(1.80) and spot[DAYS[1]] == pytest.approx(1.50)
    # AWS: the instance mapping (p5) and the accelerator name with its memory (p3: 16 GB V100).
    aws = {(r[1], r[4]): r[2] for r in got if r[0] == "aws"}
    assert aws[("p5.48xlarge", "on_demand")] == "h100-sxm" and aws[("p3.2xlarge", "spot")] == "v100-16gb"
    assert aws[("g5.xlarge", "on_demand")] == "a10g"  # AWS's A10 variant has its own slug
    # Vast.ai: a marketplace (community), the memory is the instance total; no spot at 0.00.
    vast = {r[1]: r for r in got if r[0] == "vastai"}
    assert vast["2x-H100_NVL-32-65536"][2] == "h100-nvl" and vast["4x-A100_SXM4-32-65536"][2] == "a100-40gb"
    assert all(r[5] for r in vast.values()) and {r[4] for r in vast.values()} == {"on_demand"}
    # Unmappable GPUs are quarantined with their raw names (once per instance type, not per day).
    quarantined = rows(
        home,
        "SELECT provider, raw_row, reason, snapshot_date FROM quarantine WHERE source = 'catalog_history' ORDER BY ALL",
    )
    raws = {(p, raw) for p, raw, _, _ in quarantined}
    assert ("lambda", "gpu_1x_rtx6000: RTX6000 x1.0") in raws
    assert ("aws", "Standard_fraction: A10 x0.5") in raws
    assert len(quarantined) == len(raws) and all(d == DAYS[0] for *_, d in quarantined)
    # Coverage per cloud on stderr.
    # Coverage per cloud on stderr (three distinct lambda files of four GPU rows, the RTX 6000 unmapped).
    assert "lambda: 9/12 GPU rows mapped (75.0%)" in result.err


def test_a_price_below_the_floor_is_quarantined_like_import_observations(
    home: Path, cli, tmp_path: Path
) -> None:
    """The per-GPU-hour floor of pages and import-observations (scrapers/parsing.py) holds for
    catalog history too: 1e-9 (issue 37 stored it as $0.0000, then history showed it as the cheapest
    H100) and 0.04 (spot 0.072) for 8 GPUs ($0.005, $0.009/GPU-h) are quarantined with the reason; $0.01/GPU-h lands."""
    from gpuprice.scrapers.parsing import MIN_USD_PER_GPU_HOUR

    repo = init_repo(tmp_path / "floor-catalog")
    text = "\n".join(
        [
            LAMBDA_HEADER,
            f"gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,1e-9,us-east-1,{_gpu_info('H100', 8, 81920)},",
            f"gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,0.04,us-west-1,{_gpu_info('H100', 8, 81920)},0.072",
            f"gpu_1x_a100_sxm4,A100,1.0,30.0,200.0,{MIN_USD_PER_GPU_HOUR},us-east-1,{_gpu_info('A100', 1, 40960)},",
            "",
        ]
    )
    commit(repo, {"catalogs/v7/lambda/vms.csv": text}, dt.datetime.combine(DAYS[0], dt.time(6, 0)))
    result = cli("import-history", "skypilot-catalog", "--repo", str(repo))
    assert result.code == 0, result.err
    got = rows(home, CATALOG_ROWS)
    assert [(r[2], r[4], r[8]) for r in got] == [("a100-40gb", "on_demand", pytest.approx(0.01))]
    reasons = rows(
        home, "SELECT raw_row, reason FROM quarantine WHERE source = 'catalog_history' ORDER BY ALL"
    )
    assert len(reasons) == 2 and all("below the floor of $0.01" in reason for _, reason in reasons), reasons
    assert {raw for raw, _ in reasons} == {
        "gpu_8x_h100_sxm5: H100 x8.0 on_demand",
        "gpu_8x_h100_sxm5: H100 x8.0 spot",
    }


def test_same_range_twice_changes_nothing(home: Path, cli, catalog_repo: Path) -> None:
    assert cli("import-history", "skypilot-catalog", "--repo", str(catalog_repo)).code == 0
    before = rows(home, CATALOG_ROWS + "")
    stamps = rows(home, "SELECT min(ingested_at), max(ingested_at), count(*) FROM price_snapshots")
    quarantine = rows(home, "SELECT * FROM quarantine ORDER BY ALL")
    again = cli("import-history", "skypilot-catalog", "--repo", str(catalog_repo))
    assert again.code == 0
    assert " 0 added, 0 updated" in again.out and "0 removed" in again.out
    assert rows(home, CATALOG_ROWS) == before
    assert rows(home, "SELECT min(ingested_at), max(ingested_at), count(*) FROM price_snapshots") == stamps
    assert rows(home, "SELECT * FROM quarantine ORDER BY ALL") == quarantine


def test_killed_part_way_and_run_again_ends_identical(
    home: Path, cli, catalog_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash after the first batch (of one day) leaves that day committed; the re-run finishes."""
    from gpuprice.warehouse import history_import

    real = history_import.load_days

    def crash_after_first_batch(con, reader, days, summary, **kwargs):
        def boom(done: int) -> None:
            if done == 1:
                raise KeyboardInterrupt  # as if killed

        return real(
            con, reader, days, summary, batch_days=1, progress=kwargs.get("progress"), after_batch=boom
        )

    monkeypatch.setattr(history_import, "load_days", crash_after_first_batch)
    killed = cli("import-history", "skypilot-catalog", "--repo", str(catalog_repo))
    assert killed.code == 130  # interrupted
    partial = rows(home, "SELECT DISTINCT observed_on FROM price_snapshots WHERE source = 'catalog_history'")
    assert partial == [(DAYS[0],)]  # the first batch was committed, nothing else
    monkeypatch.setattr(history_import, "load_days", real)
    assert cli("import-history", "skypilot-catalog", "--repo", str(catalog_repo)).code == 0
    resumed = rows(home, CATALOG_ROWS)

    clean_home = tmp_path / "clean"
    clean_home.mkdir()
    monkeypatch.setenv("GPUPRICE_HOME", str(clean_home))
    assert cli("import-history", "skypilot-catalog", "--repo", str(catalog_repo)).code == 0
    assert rows(clean_home, CATALOG_ROWS) == resumed


def test_from_to_limits_the_days(home: Path, cli, catalog_repo: Path) -> None:
    result = cli(
        "import-history",
        "skypilot-catalog",
        "--repo",
        str(catalog_repo),
        "--from",
        "2025-03-02",
        "--to",
        "2025-03-03",
    )
    assert result.code == 0, result.err
    got = rows(
        home, "SELECT DISTINCT observed_on FROM price_snapshots WHERE source = 'catalog_history' ORDER BY 1"
    )
    assert [d for (d,) in got] == DAYS[1:3]


def test_history_marks_catalog_points_and_scraped_days_win(home: Path, cli, catalog_repo: Path) -> None:
    """A day gpuprice scraped itself keeps its own rows; history says which source each point has."""
    from gpuprice.scrapers.offer import Offer
    from gpuprice.warehouse.connection import writer
    from gpuprice.warehouse.publish import publish_analytics_copy
    from gpuprice.warehouse.writes import replace_snapshot_partition

    warehouse = home / "warehouse.duckdb"
    scraped = Offer(
        provider="lambda",
        gpu="h100-sxm",
        gpu_raw="H100 SXM",
        gpu_count=8,
        usd_per_gpu_hour=2.49,
        usd_per_instance_hour=19.92,
        sku="8x H100 SXM",
        region="us-east-1",
    )
    with writer(warehouse) as con:
        replace_snapshot_partition(
            con,
            provider="lambda",
            snapshot_date=DAYS[2],
            offers=[scraped],
            source="scrape",
            raw_sha256="ab" * 32,
            parser_version="lambda/1",
        )
        publish_analytics_copy(con, warehouse, home / "analytics.duckdb")
    assert cli("import-history", "skypilot-catalog", "--repo", str(catalog_repo)).code == 0

    result = cli(
        "history",
        "--gpu",
        "h100-sxm",
        "--since",
        DAYS[0].isoformat(),
        "--until",
        DAYS[3].isoformat(),
        "--format",
        "json",
    )
    assert result.code == 0, result.err
    points = {(p["date"], p["provider"]): p for p in json.loads(result.out)}
    assert points[(DAYS[0].isoformat(), "lambda")]["source"] == "catalog_history"
    assert points[(DAYS[0].isoformat(), "lambda")]["usd_per_gpu_hour"] == pytest.approx(2.99)
    # The scraped day: the scrape's own row, not the catalog's (which says 19.92 / 8 too here).
    own = points[(DAYS[2].isoformat(), "lambda")]
    assert own["source"] == "scrape" and own["usd_per_gpu_hour"] == pytest.approx(2.49)
    assert points[(DAYS[3].isoformat(), "lambda")]["source"] == "catalog_history"
    table = cli(
        "history", "--gpu", "h100-sxm", "--since", DAYS[0].isoformat(), "--until", DAYS[3].isoformat()
    )
    assert "* catalog history" in table.out and "(0d)*" in table.out

    # The catalog rows of the scraped day are stored, not in force, and compared in catalog_vs_scrape.
    assert (
        rows(
            home,
            "SELECT count(*) FROM price_snapshots WHERE source = 'catalog_history' AND provider = 'lambda' AND snapshot_date = ?",
            [DAYS[2]],
        )[0][0]
        > 0
    )
    compare = cli(
        "sql",
        "SELECT provider, day, gpu, gpu_count, tier, region, scraped_usd_per_gpu_hour, catalog_usd_per_gpu_hour, differs FROM analytics.catalog_vs_scrape ORDER BY region",
        "--format",
        "json",
    )
    assert compare.code == 0, compare.err
    checks = json.loads(compare.out)
    east = next(c for c in checks if c["region"] == "us-east-1" and c["gpu"] == "h100-sxm")
    assert east["scraped_usd_per_gpu_hour"] == pytest.approx(2.49)
    assert east["catalog_usd_per_gpu_hour"] == pytest.approx(19.92 / 8) and east["differs"] is False
    # The catalog lists regions and GPUs the page did not show: flagged as differing.
    assert any(c["differs"] and c["scraped_usd_per_gpu_hour"] is None for c in checks)


def test_catalog_vs_scrape_flags_a_different_price(home: Path, cli, catalog_repo: Path) -> None:
    from gpuprice.scrapers.offer import Offer
    from gpuprice.warehouse.connection import writer
    from gpuprice.warehouse.publish import publish_analytics_copy
    from gpuprice.warehouse.writes import replace_snapshot_partition

    warehouse = home / "warehouse.duckdb"
    scraped = Offer(
        provider="runpod",
        gpu="h100-sxm",
        gpu_raw="H100 SXM",
        gpu_count=1,
        usd_per_gpu_hour=2.99,
        sku="H100 SXM",
    )  # no region on the page: compared with the catalog's cheapest region
    assert cli("import-history", "skypilot-catalog", "--repo", str(catalog_repo)).code == 0
    with writer(warehouse) as con:
        replace_snapshot_partition(
            con,
            provider="runpod",
            snapshot_date=DAYS[0],
            offers=[scraped],
            source="scrape",
            raw_sha256="cd" * 32,
            parser_version="runpod/1",
        )
        publish_analytics_copy(con, warehouse, home / "analytics.duckdb")
    out = cli(
        "sql",
        "SELECT * FROM analytics.catalog_vs_scrape WHERE provider = 'runpod' AND gpu = 'h100-sxm' AND tier = 'on_demand'",
        "--format",
        "json",
    )
    (row,) = json.loads(out.out)
    assert row["region"] is None and row["differs"] is True
    assert row["scraped_usd_per_gpu_hour"] == pytest.approx(2.99) and row[
        "catalog_usd_per_gpu_hour"
    ] == pytest.approx(2.69)
    assert row["pct_difference"] == pytest.approx(-10.03, abs=0.01)


def test_an_offer_gone_from_a_later_commit_of_the_day_is_removed(home: Path, cli, tmp_path: Path) -> None:
    again = import_then_drop_offers(cli, tmp_path / "cat")
    assert again.code == 0 and "1 removed" in again.out
    skus = rows(home, "SELECT DISTINCT sku FROM price_snapshots WHERE source = 'catalog_history'")
    assert skus == [("1x_H100-SXM_SECURE",)]


def test_a_url_is_cloned_into_home(home: Path, cli, catalog_repo: Path) -> None:
    result = cli(
        "import-history", "skypilot-catalog", "--repo", catalog_repo.as_uri(), "--from", "2025-03-03"
    )
    assert result.code == 0, result.err
    assert (home / "catalog-history" / "skypilot-catalog.git" / "HEAD").exists()
    got = rows(
        home, "SELECT DISTINCT observed_on FROM price_snapshots WHERE source = 'catalog_history' ORDER BY 1"
    )
    assert [d for (d,) in got] == DAYS[2:]


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        (
            {"catalogs/v7/lambda/vms.csv": lambda_csv(23.92).replace(",Price,", ",Cost,")},
            ("catalogs/v7/lambda/vms.csv", "Price"),
        ),
        (
            {"catalogs/v7/aws/vms.csv": AWS_CSV.replace("98.32", "$98.32")},
            ("catalogs/v7/aws/vms.csv", "column Price", "$98.32"),
        ),
        (
            {"catalogs/v7/runpod/vms.csv": runpod_csv("n/a")},
            ("catalogs/v7/runpod/vms.csv", "column SpotPrice"),
        ),
        (
            {"catalogs/v7/vast/vms.csv": VAST_CSV.replace("H100,2,32", "H100,two,32")},
            ("catalogs/v7/vast/vms.csv", "line 2", "column AcceleratorCount", "two"),
        ),
    ],
)
def test_a_bad_catalog_file_is_one_line_and_nothing_is_imported(
    home: Path, cli, catalog_repo: Path, change: dict[str, str], expect: tuple[str, ...]
) -> None:
    commit(catalog_repo, change, dt.datetime(2025, 3, 10, 6))  # the bad file comes last
    result = cli("import-history", "skypilot-catalog", "--repo", str(catalog_repo))
    assert result.code == 2
    lines = [
        line for line in result.err.splitlines() if line.startswith(("error", "gpuprice"))
    ] or result.err.strip().splitlines()
    assert all(e in result.err for e in expect), result.err
    assert "Traceback" not in result.err and not result.out
    assert not (home / "warehouse.duckdb").exists() or rows(
        home, "SELECT count(*) FROM price_snapshots WHERE source = 'catalog_history'"
    ) == [(0,)]
    assert lines


def test_not_a_git_repository_is_one_line(home: Path, cli, tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    result = cli("import-history", "skypilot-catalog", "--repo", str(folder))
    assert result.code == 2 and "not a git repository" in result.err and str(folder) in result.err
    unknown = cli("import-history", "other-catalog", "--repo", str(folder))
    assert unknown.code == 2 and "skypilot-catalog" in unknown.err
    missing = cli("import-history", "skypilot-catalog", "--repo", str(tmp_path / "nope"))
    assert missing.code == 2 and "no such folder" in missing.err
