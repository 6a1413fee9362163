"""The scheduled path, end to end: the real ``dagster-webserver`` and ``dagster-daemon`` on
127.0.0.1, in a temporary DAGSTER_HOME (the project's dagster.yaml: queued run coordinator, pool
``duckdb`` of one) and GPUPRICE_HOME.

Once the code location has loaded, ``daily_scrape`` is launched for one partition through the
GraphQL API (as the UI does), a schedule ticks in the daemon and requests ``daily_scrape`` for
another, the daemon's queue launches both, and the models sensor (started through the API, as a
user turns it on in the UI) follows each with ``daily_models``. Both days must then be in the
warehouse and in the published analytics copy. Every wait is bounded; both processes (and
everything they started) are stopped at the end.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import httpx
import pytest

from gpuprice.pipelines.instance import dagster_home
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE, newest_archive_date

pytestmark = [pytest.mark.slow, pytest.mark.dagster_services]

BIN = Path(sys.executable).parent
LOCATION_FILE = Path(__file__).resolve().parent / "services" / "tick_location.py"
LOAD_TIMEOUT_S = 300.0  # a code location load on a busy 2-core machine
RUNS_TIMEOUT_S = 900.0  # two scrape and two models runs, each a process of its own
STOP_TIMEOUT_S = 20.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _services_available() -> str | None:
    """Why the services cannot start here, or None."""
    for name in ("dagster-webserver", "dagster-daemon"):
        if not (BIN / name).exists():
            return f"{name} is not installed beside {sys.executable} (make install)"
    try:
        _free_port()
    except OSError as exc:
        return f"cannot bind a port on 127.0.0.1: {exc}"
    return None


@contextlib.contextmanager
def _service(cmd: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """Run ``cmd`` in a process group of its own; stop the whole group (code servers, run workers)."""
    with open(log, "wb") as out:
        process = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            yield process
        finally:
            for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, 5.0)):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, sig)
                deadline = time.monotonic() + wait
                while time.monotonic() < deadline and _group_alive(process):
                    time.sleep(0.2)
                if not _group_alive(process):
                    break
            process.wait(timeout=5)


def _group_alive(process: subprocess.Popen) -> bool:
    process.poll()
    try:
        os.killpg(process.pid, 0)
    except ProcessLookupError:
        return False
    # Zombies of the group count as gone once the leader is reaped.
    return process.returncode is None or _group_has_live_members(process.pid)


def _group_has_live_members(pgid: int) -> bool:
    import psutil

    for proc in psutil.process_iter(["pid", "status"]):
        with contextlib.suppress(psutil.Error):
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                return True
    return False


class GraphQL:
    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/graphql"

    def __call__(self, query: str, **variables: object) -> dict:
        response = httpx.post(self.url, json={"query": query, "variables": variables}, timeout=30)
        response.raise_for_status()
        body = response.json()
        assert "errors" not in body, body["errors"]
        return body["data"]


WORKSPACE = """{ workspaceOrError { __typename ... on Workspace { locationEntries { name loadStatus
  locationOrLoadError { __typename ... on PythonError { message }
    ... on RepositoryLocation { repositories { name } } } } } } }"""
LAUNCH = """mutation($params: ExecutionParams!) { launchRun(executionParams: $params) { __typename
  ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }"""
START_SENSOR = """mutation($selector: SensorSelector!) { startSensor(sensorSelector: $selector) { __typename
  ... on Sensor { sensorState { status } } ... on PythonError { message } } }"""
RUNS = """{ runsOrError { __typename ... on Runs { results { runId jobName status
  tags { key value } } } } }"""


def _wait(what: str, timeout: float, check, *, logs: list[Path], every: float = 2.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except (httpx.HTTPError, OSError) as exc:  # not serving yet
            last = exc
        else:
            if last:
                return last
        time.sleep(every)
    tails = "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}" for log in logs)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; last: {last!r}\n{tails}")


def test_a_launched_run_and_a_schedule_tick_land_their_days(tmp_path: Path) -> None:
    reason = _services_available()
    if reason:
        pytest.skip(reason)
    newest = newest_archive_date(SAMPLE_ARCHIVE)
    assert newest is not None
    launched, ticked = newest.isoformat(), (newest - dt.timedelta(days=1)).isoformat()
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPRICE_", "DAGSTER_"))}
    env |= {
        "GPUPRICE_HOME": str(home),
        "GPUPRICE_SOURCE": "archive",
        "DAGSTER_HOME": str(dagster_home(home)),
        "GPUPRICE_TEST_TICK_PARTITION": ticked,
    }
    port = _free_port()
    logs = [tmp_path / "webserver.log", tmp_path / "daemon.log"]
    target = ["-f", str(LOCATION_FILE), "-d", str(LOCATION_FILE.parent)]
    webserver = [str(BIN / "dagster-webserver"), "-h", "127.0.0.1", "-p", str(port), *target]
    daemon = [str(BIN / "dagster-daemon"), "run", *target]
    # The instance's storage is created once before the two services start, as a deployment does
    # (README "Scheduled runs"): started at once on a fresh DAGSTER_HOME, both create the SQLite
    # storage and stamp its schema version, and one of them then fails to load with alembic's
    # "Version table 'alembic_version' has more than one head present" (seen once in CI).
    subprocess.run(
        [str(BIN / "dagster"), "instance", "migrate"], env=env, check=True, capture_output=True, timeout=300
    )
    with _service(webserver, env, logs[0]), _service(daemon, env, logs[1]):
        gql = GraphQL(port)

        def loaded() -> dict | None:
            entries = gql(WORKSPACE)["workspaceOrError"]["locationEntries"]
            if not entries or entries[0]["loadStatus"] != "LOADED":
                return None
            location = entries[0]["locationOrLoadError"]
            assert location["__typename"] == "RepositoryLocation", location  # a load error fails here
            return {"location": entries[0]["name"], "repository": location["repositories"][0]["name"]}

        where = _wait("the code location to load", LOAD_TIMEOUT_S, loaded, logs=logs)
        selector = {"repositoryLocationName": where["location"], "repositoryName": where["repository"]}
        started = gql(START_SENSOR, selector={**selector, "sensorName": "models_after_scrape_success"})
        assert started["startSensor"]["sensorState"]["status"] == "RUNNING", started
        launch = gql(
            LAUNCH,
            params={
                "selector": {**selector, "jobName": "daily_scrape"},
                "runConfigData": {},
                "executionMetadata": {"tags": [{"key": "dagster/partition", "value": launched}]},
            },
        )["launchRun"]
        assert launch["__typename"] == "LaunchRunSuccess", launch

        def finished() -> list[dict] | None:
            runs = gql(RUNS)["runsOrError"]["results"]
            failed = [r for r in runs if r["status"] in ("FAILURE", "CANCELED")]
            assert not failed, failed
            done = {
                (r["jobName"], next(t["value"] for t in r["tags"] if t["key"] == "dagster/partition"))
                for r in runs
                if r["status"] == "SUCCESS"
            }
            wanted = {(job, day) for job in ("daily_scrape", "daily_models") for day in (launched, ticked)}
            return runs if wanted <= done else None

        runs = _wait("both days' scrape and models runs", RUNS_TIMEOUT_S, finished, logs=logs, every=5.0)
        tags = [{t["key"]: t["value"] for t in r["tags"]} for r in runs]
        ticks = [
            (r["jobName"], t["dagster/partition"]) for r, t in zip(runs, tags) if "dagster/schedule_name" in t
        ]
        assert ticks and set(ticks) == {("daily_scrape", ticked)}  # the schedule's tick(s)
        sensed = {
            (r["jobName"], t["dagster/partition"]) for r, t in zip(runs, tags) if "dagster/sensor_name" in t
        }
        assert sensed == {("daily_models", launched), ("daily_models", ticked)}  # the models sensor's

    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        landed = con.execute(
            "SELECT DISTINCT CAST(snapshot_date AS VARCHAR) FROM provider_runs WHERE status = 'success'"
        ).fetchall()
    finally:
        con.close()
    assert {launched, ticked} <= {row[0] for row in landed}
    con = duckdb.connect(str(home / "analytics.duckdb"), read_only=True)
    try:
        published = con.execute(
            "SELECT DISTINCT CAST(snapshot_date AS VARCHAR) FROM analytics.analytics.workload_rankings"
        ).fetchall()
    finally:
        con.close()
    assert {launched, ticked} <= {row[0] for row in published}
