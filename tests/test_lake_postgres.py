"""DuckLake on a real PostgreSQL catalog: writers at once, a pinned analyst, Dagster on PostgreSQL.

The tests that need a server read GPUPRICE_TEST_PG_DSN (libpq keywords of a server on 127.0.0.1
whose user may create databases; `.ci/run` starts one with `.ci/postgres start`) and skip with the
reason when it is unset or unreachable. Each test makes its own databases and drops them after.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import D1, make_offer
from gpuprice.errors import BadInput
from gpuprice.warehouse import lake
from gpuprice.warehouse.connection import connect_writer

PG_DSN_VAR = "GPUPRICE_TEST_PG_DSN"
REPO = Path(__file__).resolve().parents[1]
ARCHIVE_DAY = "2026-10-06"  # the sample archive's newest day
WRITERS = ("lambda", "runpod")  # two providers, two processes


def _dsn_with(dsn: str, **keys: str) -> str:
    """``dsn`` (libpq keywords) with ``keys`` replaced or added."""
    parts = dict(part.split("=", 1) for part in dsn.split())
    parts.update(keys)
    return " ".join(f"{k}={v}" for k, v in parts.items())


@pytest.fixture
def pg_database() -> Iterator[Callable[[], str]]:
    """Makes fresh databases on the test server (dropped afterwards); yields the factory, which
    returns each new database's DSN."""
    dsn = os.environ.get(PG_DSN_VAR, "").strip()
    if not dsn:
        pytest.skip(f"{PG_DSN_VAR} is not set: no PostgreSQL server to test against (.ci/postgres start)")
    import psycopg2

    try:
        admin = psycopg2.connect(dsn, connect_timeout=5)
    except psycopg2.OperationalError as exc:
        pytest.skip(f"PostgreSQL at {PG_DSN_VAR} is unreachable: {str(exc).strip().splitlines()[0]}")
    admin.autocommit = True
    made: list[str] = []

    def make() -> str:
        name = f"gpuprice_test_{uuid.uuid4().hex[:12]}"
        with admin.cursor() as cur:
            cur.execute(f"CREATE DATABASE {name}")
        made.append(name)
        return _dsn_with(dsn, dbname=name)

    try:
        yield make
    finally:
        with admin.cursor() as cur:
            for name in made:
                cur.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()


def _select_lake(monkeypatch: pytest.MonkeyPatch, catalog_dsn: str, data: Path) -> dict[str, str]:
    """Select the lake in this process (restored after the test); its settings for children."""
    monkeypatch.setattr(lake, "_selected", None)
    env = {"GPUPRICE_WAREHOUSE": f"ducklake:postgres:{catalog_dsn}", "GPUPRICE_WAREHOUSE_DATA": str(data)}
    lake.select(env["GPUPRICE_WAREHOUSE"], env["GPUPRICE_WAREHOUSE_DATA"])
    return env


def _dagster_yaml(folder: Path, dsn: str) -> Path:
    """A Dagster instance whose runs, events and schedules live in PostgreSQL (dagster-postgres)."""
    keys = dict(part.split("=", 1) for part in dsn.split())
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dagster.yaml").write_text(
        textwrap.dedent(
            f"""\
            telemetry:
              enabled: false
            storage:
              postgres:
                postgres_db:
                  hostname: {keys["host"]}
                  port: {keys.get("port", "5432")}
                  username: {keys["user"]}
                  password: {keys["password"]}
                  db_name: {keys["dbname"]}
                  scheme: postgresql+psycopg2
            # With a DuckLake the warehouse takes several writers: no one-slot pool.
            concurrency:
              pools:
                default_limit: 4
            """
        )
    )
    return folder


ANALYST = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from gpuprice.warehouse import lake
    lake.select(sys.argv[1], sys.argv[2])
    stop = Path(sys.argv[3])
    con = lake.connect_lake(lake.lake_target(Path(".")), read_only=True)
    pinned_at = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('lake')").fetchone()[0]
    # A second attachment pinned to the snapshot current when the analyst started.
    con.execute(
        f"ATTACH 'ducklake:{lake.lake_target(Path('.')).catalog.replace(chr(39), chr(39) * 2)}' AS pinned"
        f" (READ_ONLY, SNAPSHOT_VERSION {pinned_at}, DATA_PATH '{sys.argv[2]}/')"
    )
    pinned, live, errors = [], [], []
    print("ready", flush=True)
    while not stop.exists() or len(pinned) < 3:
        try:
            pinned.append(con.execute("SELECT count(*) FROM pinned.price_snapshots").fetchone()[0])
            live.append(con.execute("SELECT count(*) FROM lake.price_snapshots").fetchone()[0])
        except Exception as exc:  # any reader error fails the test
            errors.append(f"{type(exc).__name__}: {exc}")
        time.sleep(0.05)
    print(json.dumps({"pinned": pinned, "live": live, "errors": errors, "snapshot": pinned_at}), flush=True)
    """
)


def _child_env(home: Path, lake_env: dict[str, str], dagster_home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPRICE_", "DAGSTER_"))}
    return {
        **env,
        **lake_env,
        "GPUPRICE_HOME": str(home),
        "GPUPRICE_SOURCE": "archive",
        "DAGSTER_HOME": str(dagster_home),
    }


def _prepare_dagster_instance(home: Path, lake_env: dict[str, str], dagster_home: Path) -> None:
    """What a team does once before its writers start (README): create Dagster's tables and set the
    pool's limit. Two first runs at once would both insert the pool's row (a duplicate key)."""
    dagster = str(Path(sys.executable).with_name("dagster"))
    env = _child_env(home, lake_env, dagster_home)
    for args in (("instance", "migrate"), ("instance", "concurrency", "set", "duckdb", "4")):
        done = subprocess.run(
            [dagster, *args], env=env, capture_output=True, text=True, cwd=REPO, timeout=300
        )
        assert done.returncode == 0, f"dagster {' '.join(args)}: {done.stderr[-2000:]}"


@pytest.mark.slow
def test_two_writers_load_different_providers_into_one_lake_while_an_analyst_reads_a_pinned_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_database
):
    """The daily job's provider steps as two Dagster runs in two processes at once (Dagster's own
    storage on the same PostgreSQL), each loading its provider into the same DuckLake; an analyst
    pinned to the snapshot before them reads the same rows throughout, with no error."""
    import dagster as dg

    catalog, dagster_db = pg_database(), pg_database()
    lake_env = _select_lake(monkeypatch, catalog, tmp_path / "lake")
    connect_writer(tmp_path / "setup" / "warehouse.duckdb").close()  # the team's lake exists: schema, views
    dagster_home = _dagster_yaml(tmp_path / "dagster", dagster_db)
    _prepare_dagster_instance(tmp_path / "setup_home", lake_env, dagster_home)

    stop = tmp_path / "stop"
    analyst = subprocess.Popen(
        [
            sys.executable,
            "-c",
            ANALYST,
            lake_env["GPUPRICE_WAREHOUSE"],
            lake_env["GPUPRICE_WAREHOUSE_DATA"],
            str(stop),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    writers = {}
    try:
        assert analyst.stdout is not None and analyst.stdout.readline().strip() == "ready"
        for provider in WRITERS:
            select = ",".join(f"{stage}/{stage}_{provider}" for stage in ("raw", "parsed", "snapshot"))
            writers[provider] = subprocess.Popen(
                [
                    str(Path(sys.executable).with_name("dagster")),
                    *("asset", "materialize", "-m", "gpuprice.pipelines.definitions"),
                    *("--select", select, "--partition", ARCHIVE_DAY),
                ],
                env=_child_env(tmp_path / f"home_{provider}", lake_env, dagster_home),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                cwd=REPO,
            )
        outputs = {p: w.communicate(timeout=600)[0] for p, w in writers.items()}
    finally:
        stop.touch()
        for w in writers.values():
            if w.poll() is None:
                w.kill()
        report_text, analyst_err = analyst.communicate(timeout=120)
    for provider, w in writers.items():
        assert w.returncode == 0, f"{provider}: {outputs[provider][-2000:]}"

    report = json.loads(report_text.strip().splitlines()[-1])
    assert report["errors"] == [], analyst_err[-1000:]
    assert len(report["pinned"]) >= 3
    assert set(report["pinned"]) == {0}  # the pinned snapshot never sees a later commit
    assert report["live"] == sorted(report["live"])  # the live view only ever grows

    con = connect_writer(tmp_path / "check" / "warehouse.duckdb")
    try:
        counts = dict(
            con.execute(
                "SELECT provider, count(*) FROM price_snapshots WHERE snapshot_date = ? GROUP BY provider",
                [ARCHIVE_DAY],
            ).fetchall()
        )
        runs = dict(
            con.execute(
                "SELECT provider, offers FROM provider_runs WHERE snapshot_date = ? AND status = 'success'",
                [ARCHIVE_DAY],
            ).fetchall()
        )
    finally:
        con.close()
    # Nothing lost: each provider's whole day, as its own run recorded it in the same transaction.
    assert set(counts) == set(WRITERS) and all(counts[p] > 0 for p in WRITERS)
    assert counts == runs
    assert report["live"][-1] == sum(counts.values())

    # Dagster's runs and materializations are in PostgreSQL, as the team's webserver would show them.
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    with dg.DagsterInstance.get() as instance:
        assert type(instance.run_storage).__module__.startswith("dagster_postgres")
        finished = instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.SUCCESS]))
        assert len(finished) == 2
        for provider in WRITERS:
            event = instance.get_latest_materialization_event(
                dg.AssetKey(["snapshot", f"snapshot_{provider}"])
            )
            assert event is not None and event.asset_materialization is not None
            assert event.asset_materialization.partition == ARCHIVE_DAY


RACER = textwrap.dedent(
    """
    import datetime as dt, json, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[4])
    from conftest import make_offer
    from gpuprice.warehouse import lake
    from gpuprice.warehouse.connection import connect_writer
    from gpuprice.warehouse.writes import replace_snapshot_partition
    lake.select(sys.argv[1], sys.argv[2])
    writer = int(sys.argv[3])
    con = connect_writer(Path(f"home{writer}") / "warehouse.duckdb")
    done, lost = 0, []
    for attempt in range(6):
        offers = [make_offer(sku=f"s{i}", usd_per_gpu_hour=writer + i / 100) for i in range(40)]
        try:
            replace_snapshot_partition(con, provider="lambda", snapshot_date=dt.date(2026, 10, 1),
                offers=offers, source="archive", raw_sha256=None, parser_version=str(writer))
            done += 1
        except Exception as exc:
            lost.append(type(exc).__name__ + ": " + str(exc).splitlines()[0])
    print(json.dumps({"done": done, "lost": lost}), flush=True)
    """
)


@pytest.mark.slow
def test_writers_racing_for_the_same_day_never_leave_it_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_database
):
    """Two processes replace the same provider's day again and again: a writer whose commit
    conflicts retries (DuckLake) or fails with its transaction rolled back; the day always holds
    exactly one writer's whole snapshot."""
    lake_env = _select_lake(monkeypatch, pg_database(), tmp_path / "lake")
    connect_writer(tmp_path / "setup" / "warehouse.duckdb").close()
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, *lake_env.values(), str(n), str(REPO / "tests")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        for n in (1, 2)
    ]
    results = []
    for racer in racers:
        out, err = racer.communicate(timeout=300)
        assert racer.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    # a conflict is retried (writes.COMMIT_ATTEMPTS); one that keeps losing fails cleanly
    assert all(lost.startswith("TransactionException") for r in results for lost in r["lost"]), results
    assert sum(r["done"] for r in results) >= 6, results
    con = connect_writer(tmp_path / "check" / "warehouse.duckdb")
    try:
        rows = con.execute(
            "SELECT parser_version, count(*), count(DISTINCT sku) FROM price_snapshots GROUP BY ALL"
        ).fetchall()
        runs = con.execute("SELECT offers FROM provider_runs").fetchall()
    finally:
        con.close()
    assert len(rows) == 1 and rows[0][1:] == (40, 40), rows  # one writer's whole day, once
    assert runs == [(40,)]


def test_a_wrong_password_is_one_line_naming_the_setting_without_the_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_database
):
    dsn = _dsn_with(pg_database(), password="not-the-password")
    _select_lake(monkeypatch, dsn, tmp_path / "lake")
    with pytest.raises(BadInput) as caught:
        connect_writer(tmp_path / "warehouse.duckdb")
    message = str(caught.value)
    assert "\n" not in message and "not-the-password" not in message
    assert message.startswith("GPUPRICE_WAREHOUSE=ducklake:postgres:") and "password=***" in message
    assert "password authentication failed" in message


def test_an_unreachable_catalog_is_one_line_naming_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Port 1 on the loopback: nothing listens there, no server needed.
    _select_lake(
        monkeypatch, "host=127.0.0.1 port=1 user=gp password=secret dbname=gp connect_timeout=3", tmp_path
    )
    with pytest.raises(BadInput) as caught:
        connect_writer(tmp_path / "warehouse.duckdb")
    message = str(caught.value)
    assert "\n" not in message and "secret" not in message
    assert "GPUPRICE_WAREHOUSE=ducklake:postgres:host=127.0.0.1 port=1" in message
    assert "Connection refused" in message


def test_a_missing_data_folder_under_an_existing_lake_is_one_line_naming_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from gpuprice.warehouse.writes import replace_snapshot_partition

    monkeypatch.setattr(lake, "_selected", None)
    lake.select(f"ducklake:{tmp_path / 'catalog.ducklake'}", str(tmp_path / "data"))
    con = connect_writer(tmp_path / "warehouse.duckdb")
    replace_snapshot_partition(
        con, provider="lambda", snapshot_date=D1, offers=[make_offer()], source="archive",
        raw_sha256=None, parser_version=None,
    )  # fmt: skip
    con.close()
    (tmp_path / "data").rename(tmp_path / "data.moved")  # an unmounted volume
    with pytest.raises(BadInput, match=r"^GPUPRICE_WAREHOUSE_DATA=.*/data: the folder is missing"):
        connect_writer(tmp_path / "warehouse.duckdb")


def test_passwords_are_redacted_from_catalog_strings():
    assert lake.redact("host=h password=s3cr3t dbname=x") == "host=h password=*** dbname=x"
    assert lake.redact("password='a b' user=u") == "password=*** user=u"
    assert lake.redact("postgresql://me:pw@db:5432/gp") == "postgresql://me:***@db:5432/gp"
    assert lake.redact("host=h dbname=x") == "host=h dbname=x"
