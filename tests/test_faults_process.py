"""Process faults and replays: a run killed mid-write, two runs at once, an analyst holding the
published copy, a warehouse from an older schema; the same date run twice; a backfill after a
page or parser change.

Everything starts from one warehouse seeded with two dates (copied per test). Runs go through
`gpuprice run` (in process, or as real subprocesses where a second process is the point).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from faults.runs import RunResult, environment, gpuprice
from faults.seed import SEED_DAYS, TODAY, seeded_home
from faults.tables import partition_counts, partition_rows, provider_run, table_fingerprint
from faults.tally import Tally
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE, find_archived_page, read_archived
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.scrapers.registry import provider_parser
from gpuprice.warehouse.connection import connect_reader

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
DAY_A, DAY_B = SEED_DAYS
DAY_C = TODAY
SUBPROCESS_TIMEOUT = 240  # seconds; a run takes ~10 s, more on a loaded machine

TALLY = Tally("process_faults")


@pytest.fixture(scope="module", autouse=True)
def _write_tally() -> Iterator[None]:
    yield
    TALLY.write()


def run_in_process(home: Path, *args: str, archive: Path | None = None) -> RunResult:
    env = {"GPUPRICE_HOME": str(home), "GPUPRICE_ARCHIVE": str(archive) if archive else None}
    with environment(env):
        return gpuprice("run", *args)


def assert_all_landed(result: RunResult, providers=PROVIDERS) -> None:
    lines = result.provider_lines()
    assert sorted(lines) == sorted(providers), result
    assert all(" ok " in line for line in lines.values()), result.out
    assert "Traceback" not in result.err


def subprocess_env(home: Path, archive: Path | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPRICE_")}
    env.update(GPUPRICE_HOME=str(home), PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "tests")]), **extra)
    if archive is not None:
        env["GPUPRICE_ARCHIVE"] = str(archive)
    return env


def gpuprice_process(home: Path, *args: str, archive: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "gpuprice", *args],
        cwd=REPO,
        env=subprocess_env(home, archive),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(proc: subprocess.Popen) -> RunResult:
    out, err = proc.communicate(timeout=SUBPROCESS_TIMEOUT)
    return RunResult(proc.returncode, out, err)


def archive_with(tmp: Path, provider: str, day: dt.date, recording_of: str) -> tuple[Path, bytes]:
    """A copy of the sample archive where ``provider``'s page for ``day`` is its older recording."""
    archive = tmp / "archive"
    shutil.copytree(SAMPLE_ARCHIVE, archive)
    older = find_archived_page(SAMPLE_ARCHIVE, provider, recording_of)
    assert older is not None and older.page_date.isoformat() == recording_of
    body = read_archived(older.path)
    (archive / provider / f"{day.isoformat()}.{older.kind}").write_bytes(body)
    return archive, body


def offers_on_page(provider: str, body: bytes, day: dt.date) -> int:
    return len(provider_parser(provider).parse(body, observed_on=day).offers)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every provider's snapshots of DAY_A and DAY_B (shared with the provider-fault tests)."""
    return seeded_home(tmp_path_factory)


@pytest.fixture
def home(seeded: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(seeded, copy)
    return copy


def snapshot_tables(db: Path) -> dict[str, list[tuple]]:
    tables = table_fingerprint(db)
    return {name: tables[name] for name in ("price_snapshots", "quarantine", "provider_runs")}


# ---------------------------------------------------------------------------------------------
# Killed mid-write
# ---------------------------------------------------------------------------------------------


def test_a_run_killed_inside_a_partition_write_leaves_the_old_partition_and_the_next_run_completes(
    home: Path, tmp_path: Path
):
    archive, new_page = archive_with(tmp_path, "nebius", DAY_B, "2026-07-16")
    before_rows = partition_rows(home, "nebius", DAY_B)
    before_tables = snapshot_tables(home / "warehouse.duckdb")
    before_counts = partition_counts(home)
    assert offers_on_page("nebius", new_page, DAY_B) != len(before_rows)  # the held write is a real change

    env = subprocess_env(home, archive, GPUPRICE_TEST_HOLD="nebius")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "faults.hold_in_transaction",
            "run",
            "--date",
            DAY_B.isoformat(),
            "--no-reports",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    guard = threading.Timer(SUBPROCESS_TIMEOUT, proc.kill)  # never hang the suite if HOLDING never comes
    guard.start()
    try:
        first = proc.stdout.readline().strip()
        assert first == "HOLDING", (first, proc.stderr.read() if proc.poll() is not None else "")
        os.kill(proc.pid, signal.SIGKILL)  # mid-transaction: old rows deleted, new inserted, not committed
        proc.wait(timeout=30)
    finally:
        guard.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    TALLY.fault("sigkill_inside_partition_write")
    assert proc.returncode == -signal.SIGKILL

    # The warehouse opens, and nothing of the half-written partition is there.
    after_rows = partition_rows(home, "nebius", DAY_B)
    TALLY.rows(len(before_rows), len(after_rows))
    assert after_rows == before_rows  # every column, ingested_at included: the old partition
    assert snapshot_tables(home / "warehouse.duckdb") == before_tables
    after_counts = partition_counts(home)
    for key, count in before_counts.items():
        TALLY.rows(count, after_counts.get(key, 0))
    assert after_counts == before_counts

    # The next run completes it.
    result = run_in_process(home, "--date", DAY_B.isoformat(), "--no-reports", archive=archive)
    assert_all_landed(result)
    TALLY.run(survived=True)
    assert len(partition_rows(home, "nebius", DAY_B)) == offers_on_page("nebius", new_page, DAY_B)
    assert partition_rows(home, "nebius", DAY_B) != before_rows
    assert provider_run(home, "nebius", DAY_B) == ("success", None)


def test_a_write_that_fails_is_reported_failed_even_after_an_earlier_success_that_day(
    home: Path, monkeypatch: pytest.MonkeyPatch
):
    import gpuprice.warehouse.writes as writes

    original = writes.replace_snapshot_partitions  # what every snapshot write goes through

    def disk_full(con, **kwargs):
        if kwargs["provider"] == "coreweave":
            raise duckdb.IOException("IO Error: No space left on device")
        return original(con, **kwargs)

    monkeypatch.setattr(writes, "replace_snapshot_partitions", disk_full)
    before = partition_rows(home, "coreweave", DAY_B)
    assert provider_run(home, "coreweave", DAY_B) == ("success", None)  # the seed's run of the same date
    result = run_in_process(
        home, "--date", DAY_B.isoformat(), "--providers", "coreweave,lambda", "--no-reports"
    )
    TALLY.fault("disk_full_during_partition_write")
    TALLY.run(survived="Traceback" not in result.err and result.code == 1)
    lines = result.provider_lines()
    assert " FAILED " in lines["coreweave"] and "No space left on device" in lines["coreweave"], result.out
    assert " ok " in lines["lambda"]
    assert result.code == 1
    after = partition_rows(home, "coreweave", DAY_B)
    TALLY.rows(len(before), len(after))
    assert after == before


def test_a_damaged_page_in_the_raw_store_is_stored_again(home: Path):
    from gpuprice.scrapers.rawstore import read_raw

    stored = sorted((home / "raw" / "lambda" / DAY_B.isoformat()).glob("*.gz"))
    assert stored
    for path in stored:  # a copy cut short (a failed backup restore, a bad disk)
        path.write_bytes(path.read_bytes()[:100])
    result = run_in_process(home, "--date", DAY_B.isoformat(), "--providers", "lambda", "--no-reports")
    TALLY.fault("damaged_raw_page")
    TALLY.run(survived="Traceback" not in result.err)
    assert_all_landed(result, ["lambda"])
    assert all(read_raw(path) for path in stored)


# ---------------------------------------------------------------------------------------------
# Two runs at once; an analyst holding the published copy
# ---------------------------------------------------------------------------------------------


def test_two_runs_started_at_once_both_land_without_corrupting_anything(home: Path):
    before = snapshot_tables(home / "warehouse.duckdb")
    seed_b = {p: partition_rows(home, p, DAY_B) for p in PROVIDERS}
    first = gpuprice_process(home, "run", "--date", DAY_B.isoformat(), "--no-reports")
    second = gpuprice_process(home, "run", "--date", DAY_C.isoformat(), "--no-reports")
    results = [finished(first), finished(second)]
    TALLY.fault("two_runs_at_once")
    for result in results:
        # Either it waited for the other run and landed, or it gave up with one clear line.
        if result.code == 2:
            assert (
                "locked by another gpuprice run" in result.err and len(result.err.strip().splitlines()) == 1
            )
        else:
            assert_all_landed(result)
        TALLY.run(survived="Traceback" not in result.err)
    assert all(r.code != 2 for r in results), "with a 60 s wait neither run should give up on a ~10 s run"

    # Same pages, so the re-run DAY_B is identical and DAY_C a copy of it; nothing duplicated.
    tables = snapshot_tables(home / "warehouse.duckdb")
    assert [r for r in tables["price_snapshots"] if r[0] != DAY_C] == before[
        "price_snapshots"
    ]  # r[0]: snapshot_date
    for provider in PROVIDERS:
        landed = partition_rows(home, provider, DAY_C)
        TALLY.rows(len(seed_b[provider]), len(landed))
        assert len(landed) == len(seed_b[provider])
        assert provider_run(home, provider, DAY_C) == ("success", None)
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        dupes = con.execute(
            "SELECT count(*) FROM (SELECT snapshot_date, provider, sku, gpu_count, tier, community, commitment_months,"
            " region, effective_from, price_basis, count(*) AS n FROM price_snapshots GROUP BY ALL HAVING n > 1)"
        ).fetchone()[0]
    finally:
        con.close()
    assert dupes == 0


ANALYST = textwrap.dedent(
    """
    import sys, duckdb
    con = duckdb.connect()                                # an analyst's session, as the README shows
    con.execute("ATTACH '" + sys.argv[1].replace("'", "''") + "' AS gp (READ_ONLY)")
    con.execute("USE gp")
    query = "SELECT max(snapshot_date) FROM analytics.latest_prices"
    print(con.execute(query).fetchone()[0], flush=True)
    sys.stdin.readline()                                  # hold it open until told
    print(con.execute(query).fetchone()[0], flush=True)
    """
)


def test_an_analyst_holding_the_published_copy_never_blocks_a_run(home: Path):
    analyst = subprocess.Popen(
        [sys.executable, "-c", ANALYST, str(home / "analytics.duckdb")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert analyst.stdout.readline().strip() == DAY_B.isoformat()
        result = finished(gpuprice_process(home, "run", "--date", DAY_C.isoformat(), "--no-reports"))
        TALLY.fault("analyst_holds_published_copy")
        TALLY.run(survived="Traceback" not in result.err and result.code in (0, 1))
        assert_all_landed(result)
        analyst.stdin.write("\n")
        analyst.stdin.flush()
        assert analyst.stdout.readline().strip() == DAY_B.isoformat()  # their session keeps its view
    finally:
        analyst.communicate(timeout=30)
    assert analyst.returncode == 0, analyst.stderr
    fresh = connect_reader(home / "analytics.duckdb")
    try:
        assert fresh.execute("SELECT max(snapshot_date) FROM analytics.latest_prices").fetchone()[0] == DAY_C
    finally:
        fresh.close()


# ---------------------------------------------------------------------------------------------
# An older warehouse
# ---------------------------------------------------------------------------------------------


def test_a_version_1_warehouse_is_migrated_in_place_not_recreated(tmp_path: Path):
    from gpuprice.warehouse.schema import SCHEMA_VERSION, V1_DDL

    home = tmp_path / "home"
    home.mkdir()
    old_day = dt.date(2025, 6, 2)
    con = duckdb.connect(str(home / "warehouse.duckdb"))
    con.execute(V1_DDL)
    con.execute(
        "INSERT INTO price_snapshots (snapshot_date, provider, sku, gpu, gpu_raw, gpu_count, tier, community,"
        " usd_per_gpu_hour, source, ingested_at) VALUES"
        " (?, 'lambda', 'gpu_1x_a100', 'a100-40gb', 'A100 40GB', 1, 'on_demand', false, 1.29, 'scrape', now()),"
        " (?, 'lambda', 'gpu_8x_a100', 'a100-40gb', 'A100 40GB', 8, 'on_demand', false, 1.29, 'scrape', now())",
        [old_day, old_day],
    )
    con.execute(
        "INSERT INTO raw_pages VALUES ('lambda', 'https://lambda.ai/pricing', ?, now(), 200, NULL, NULL, ?, 10, '/x', NULL)",
        [old_day, "0" * 64],
    )
    con.close()
    TALLY.fault("schema_v1_warehouse")

    result = run_in_process(home, "--date", DAY_B.isoformat(), "--providers", "lambda", "--no-reports")
    assert_all_landed(result, ["lambda"])
    TALLY.run(survived=True)
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT max(version) FROM schema_version").fetchone()[0] == SCHEMA_VERSION
        old = con.execute(
            "SELECT sku, price_basis FROM price_snapshots WHERE snapshot_date = ? ORDER BY sku", [old_day]
        ).fetchall()
        kept_pages = con.execute(
            "SELECT count(*) FROM raw_pages WHERE snapshot_date = ?", [old_day]
        ).fetchone()[0]
        new = con.execute("SELECT count(*) FROM price_snapshots WHERE snapshot_date = ?", [DAY_B]).fetchone()[
            0
        ]
    finally:
        con.close()
    TALLY.rows(2, len(old))
    assert old == [("gpu_1x_a100", "list"), ("gpu_8x_a100", "list")]  # v1 rows kept, new column filled
    assert kept_pages == 1
    assert new > 0


# ---------------------------------------------------------------------------------------------
# Idempotency and replay
# ---------------------------------------------------------------------------------------------


def test_the_same_date_run_twice_gives_identical_tables(home: Path):
    before = table_fingerprint(home / "warehouse.duckdb")
    published_before = table_fingerprint(home / "analytics.duckdb")
    result = run_in_process(home, "--date", DAY_B.isoformat(), "--no-reports")
    assert_all_landed(result)
    TALLY.run(survived=True)
    after = table_fingerprint(home / "warehouse.duckdb")
    assert sorted(after) == sorted(before)
    for table in before:
        assert after[table] == before[table], f"{table} changed on an identical re-run"
    assert table_fingerprint(home / "analytics.duckdb") == published_before


def _partitions_with_audit(home: Path) -> dict[tuple[str, dt.date], list[tuple]]:
    return {(p, d): partition_rows(home, p, d) for p in PROVIDERS for d in (DAY_A, DAY_B)}


def test_a_backfill_after_a_page_change_rewrites_exactly_that_partition(home: Path, tmp_path: Path):
    archive, changed = archive_with(tmp_path, "lambda", DAY_A, "2025-10-21")
    before = _partitions_with_audit(home)
    result = run_in_process(
        home, "--date", DAY_A.isoformat(), "--providers", "lambda", "--no-reports", archive=archive
    )
    assert_all_landed(result, ["lambda"])
    TALLY.run(survived=True)
    after = _partitions_with_audit(home)
    rewritten = sorted(key for key in before if after[key] != before[key])
    assert rewritten == [("lambda", DAY_A)]  # every other partition untouched, ingested_at included
    assert len(after[("lambda", DAY_A)]) == offers_on_page("lambda", changed, DAY_A)


def test_a_backfill_after_a_parser_change_rewrites_exactly_that_partition(
    home: Path, monkeypatch: pytest.MonkeyPatch
):
    module = provider_parser("crusoe")
    original = module.parse

    def parse_v2(content: bytes, observed_on=None):
        # "Version 2" of the parser: same offers, the region now filled in.
        result = original(content, observed_on=observed_on)
        result.offers[:] = [
            o.model_copy(update={"region": o.region or "us-east-backfill"}) for o in result.offers
        ]
        return result

    monkeypatch.setattr(module, "PARSER_VERSION", "crusoe/999-test")
    monkeypatch.setattr(module, "parse", parse_v2)
    before = _partitions_with_audit(home)
    result = run_in_process(home, "--date", DAY_B.isoformat(), "--providers", "crusoe", "--no-reports")
    assert_all_landed(result, ["crusoe"])
    TALLY.run(survived=True)
    after = _partitions_with_audit(home)
    assert sorted(key for key in before if after[key] != before[key]) == [("crusoe", DAY_B)]
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        versions = con.execute(
            "SELECT DISTINCT parser_version FROM price_snapshots WHERE provider = 'crusoe' AND source = 'archive'"
            " AND snapshot_date = ?",
            [DAY_B],
        ).fetchall()
        regions = con.execute(
            "SELECT count(*) FROM price_snapshots WHERE provider = 'crusoe' AND source = 'archive' AND snapshot_date = ?"
            " AND region IS NULL",
            [DAY_B],
        ).fetchone()[0]
    finally:
        con.close()
    assert versions == [("crusoe/999-test",)] and regions == 0
    assert len(after[("crusoe", DAY_B)]) == len(before[("crusoe", DAY_B)])
