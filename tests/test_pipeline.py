"""The Dagster graph: definitions load, and a whole date materializes in process."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import duckdb
import pytest

from gpuprice.scrapers.archive import SAMPLE_ARCHIVE
from gpuprice.scrapers.offer import PROVIDERS

CAPTCHA = b"<html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>"


def test_definitions_load_with_schedules_pools_and_checks():
    import dagster as dg

    from gpuprice.pipelines.definitions import defs

    keys = {k.to_user_string() for k in defs.resolve_all_asset_keys()}
    for p in PROVIDERS:
        assert {f"raw/raw_{p}", f"parsed/parsed_{p}", f"snapshot/snapshot_{p}"} <= keys
    assert {
        "dim_gpu",
        "public_price_observations",
        "offers_with_specs",
        "memory_fit",
        "workload_rankings",
        "analytics_copy",
        "weekly_reports",
    } <= keys
    assert defs.get_schedule_def("daily_scrape_0600_utc").cron_schedule == "0 6 * * *"
    assert defs.get_schedule_def("weekly_reports_monday_0700_utc").cron_schedule == "0 7 * * 1"
    graph = defs.resolve_asset_graph()
    for asset in defs.assets:
        if asset.keys != {dg.AssetKey("weekly_reports")}:  # reports read the published copy only
            assert asset.op.pool == "duckdb", asset.keys
    checks = {k.name for k in defs.resolve_asset_graph().asset_check_keys}
    assert {
        "has_priced_offers",
        "prices_plausible",
        "unique_offer_keys",
        "few_unknown_gpus",
        "no_sudden_drop",
        "every_offer_gpu_in_catalog",
    } <= checks
    assert all(
        graph.get_check_spec(k).blocking
        for k in graph.asset_check_keys
        if k.name != "every_offer_gpu_in_catalog"
    )
    assert isinstance(defs.get_job_def("daily_scrape"), dg.JobDefinition)
    # The snapshot tables' columns are shown from the definition (not repeated in every event).
    for p in PROVIDERS:
        schema = graph.get(dg.AssetKey(["snapshot", f"snapshot_{p}"])).metadata["dagster/column_schema"]
        assert {"usd_per_gpu_hour", "observed_on", "price_basis"} <= {c.name for c in schema.columns}
    # Runs launched from the UI or by a schedule pay no process start per step.
    for job in ("daily_scrape", "daily_models", "reference_data", "weekly_reports_job"):
        assert defs.resolve_job_def(job).executor_def.name == "in_process", job
    assert defs.resolve_implicit_global_asset_job_def().executor_def.name == "in_process"


def newest_sample_date() -> dt.date:
    from gpuprice.scrapers.archive import newest_archive_date

    return newest_archive_date(SAMPLE_ARCHIVE)


def snapshot_rows(home: Path):
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        return con.execute(
            "SELECT * EXCLUDE (ingested_at) FROM price_snapshots WHERE source = 'archive' ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()


@pytest.mark.slow
def test_a_date_materializes_every_provider_and_reruns_identically(home: Path, monkeypatch):
    from gpuprice.pipelines.orchestration import run_day

    day = newest_sample_date()
    summary = run_day(
        day,
        source="archive",
        providers=PROVIDERS,
        home=home,
        archive_dir=SAMPLE_ARCHIVE,
        render_reports=False,
        progress=lambda m: None,
    )
    assert [p.provider for p in summary.failed] == [], summary.failed
    assert all(p.offers > 0 for p in summary.providers)
    first = snapshot_rows(home)
    assert {r[1] for r in first} == set(PROVIDERS)
    assert (home / "analytics.duckdb").exists()
    assert list((home / "exports" / "price_snapshots").glob("snapshot_date=*/data.parquet"))
    raw = list((home / "raw").rglob("*.gz"))
    assert len(raw) >= len(PROVIDERS)

    run_day(
        day,
        source="archive",
        providers=PROVIDERS,
        home=home,
        archive_dir=SAMPLE_ARCHIVE,
        render_reports=False,
        progress=lambda m: None,
    )
    assert snapshot_rows(home) == first
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))  # as `make dev` starts the UI
    # each run: the scheduled day's two jobs, under their names, as the schedule and sensor run them
    assert_instance_holds_the_runs(home, jobs=["daily_models", "daily_scrape"] * 2)


def assert_instance_holds_the_runs(home: Path, jobs: list[str]) -> None:
    """What `make dev`'s UI reads: the CLI's runs (newest first) under the jobs' names, and every
    asset's materialization for the day."""
    import dagster as dg

    from gpuprice.pipelines.asset_keys import provider_asset_keys

    instance = dg.DagsterInstance.get()  # DAGSTER_HOME, and the dagster.yaml the CLI put there
    try:
        runs = instance.get_runs()
        assert [r.job_name for r in runs] == jobs
        assert [r.status for r in runs] == [dg.DagsterRunStatus.SUCCESS] * len(jobs)
        expected = [
            *provider_asset_keys(PROVIDERS),
            dg.AssetKey("offers_with_specs"),
            dg.AssetKey("analytics_copy"),
        ]
        for key in expected:
            event = instance.get_latest_materialization_event(key)
            assert event is not None, key
            assert event.dagster_event.partition == newest_sample_date().isoformat(), key
    finally:
        instance.dispose()


def test_a_killed_cli_run_does_not_hold_the_warehouse_slot(home: Path, monkeypatch):
    """A CLI run whose process died mid-step is failed and its pool slot freed before the next run."""
    import socket
    import subprocess
    import sys

    import dagster as dg

    from gpuprice.pipelines.instance import HOST_TAG, LAUNCHED_BY_TAG, PID_TAG, cli_instance, dagster_home

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home(home)))
    instance = dg.DagsterInstance.get()
    run = instance.create_run_for_job(
        dg.GraphDefinition(name="killed", node_defs=[]).to_job(),
        tags={LAUNCHED_BY_TAG: "cli", PID_TAG: dead.stdout.strip(), HOST_TAG: socket.gethostname()},
    )
    instance.handle_run_event(
        run.run_id,
        dg.DagsterEvent(event_type_value="PIPELINE_START", job_name="killed"),  # type: ignore[call-arg]
    )
    instance.event_log_storage.set_concurrency_slots("duckdb", 1)
    assert instance.event_log_storage.claim_concurrency_slot(
        "duckdb", run.run_id, "raw__raw_runpod"
    ).is_claimed
    instance.dispose()

    again = cli_instance(home)
    try:
        assert again.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
        assert run.run_id not in again.event_log_storage.get_concurrency_run_ids()
    finally:
        again.dispose()


@pytest.mark.slow
def test_a_broken_page_fails_only_its_provider(home: Path, tmp_path: Path, cli, monkeypatch):
    archive = tmp_path / "archive"
    shutil.copytree(SAMPLE_ARCHIVE, archive)
    monkeypatch.setenv("GPUPRICE_ARCHIVE", str(archive))
    day = newest_sample_date()
    earlier = day - dt.timedelta(days=1)
    assert cli("run", "--date", earlier.isoformat(), "--source", "archive", "--no-reports").code in (0, 1)

    # Replace nebius's page for `day` with a captcha page.
    for old in (archive / "nebius").glob(f"{day.isoformat()}.*"):
        old.unlink()
    (archive / "nebius" / f"{day.isoformat()}.html").write_bytes(CAPTCHA)
    res = cli("run", "--date", day.isoformat(), "--source", "archive", "--no-reports")
    assert res.code == 1
    failed = [line for line in res.out.splitlines() if "FAILED" in line]
    assert len(failed) == 1 and failed[0].startswith("nebius") and "price structure" in failed[0]
    ok = [line.split()[0] for line in res.out.splitlines() if " ok " in line]
    assert sorted(ok) == sorted(p for p in PROVIDERS if p != "nebius")

    con = duckdb.connect(str(home / "analytics.duckdb"), read_only=True)
    latest = dict(
        con.execute(
            "SELECT provider, max(snapshot_date) FROM analytics.analytics.latest_prices GROUP BY provider"
        ).fetchall()
    )
    stale = dict(con.execute("SELECT provider, stale FROM analytics.analytics.provider_freshness").fetchall())
    con.close()
    assert latest["nebius"] == earlier  # the previous snapshot stays the latest
    assert latest["lambda"] == day
    assert stale["nebius"] is True and stale["coreweave"] is False
    # Lambda's newest recording is weeks older than the date: replayed, and stale by its page's date.
    assert stale["lambda"] is True
    # The raw captcha body was kept.
    assert any(p.stat().st_size > 0 for p in (home / "raw" / "nebius" / day.isoformat()).glob("*.gz"))
    # The run's log, as the UI shows it (the same job and step whoever launches it): one failed
    # step, its error one line naming the provider, the date, the cause and the command to retry.
    errors = step_errors(home, "daily_scrape")
    assert list(errors) == ["scrape_nebius"], errors
    assert errors["scrape_nebius"].startswith(f"nebius {day}: parse failed: ")
    assert "the previous snapshot stays the latest" in errors["scrape_nebius"]
    assert errors["scrape_nebius"].endswith(f"gpuprice run --source raw --date {day} --providers nebius")


def step_errors(home: Path, job: str) -> dict[str, str]:
    """The newest ``job`` run's failed steps and their error, read through Dagster's instance API
    (the event log the UI reads); each error must be one line."""
    import dagster as dg

    from gpuprice.pipelines.instance import dagster_home

    instance = dg.DagsterInstance.from_config(str(dagster_home(home)))
    try:
        run = instance.get_runs(filters=dg.RunsFilter(job_name=job), limit=1)[0]
        errors = {}
        for entry in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE):
            failure = entry.dagster_event.step_failure_data
            description = failure.user_failure_data.description
            assert "\n" not in description
            assert failure.error.message.strip().endswith(description)  # the error's only line
            assert len(failure.error.message.strip().splitlines()) == 1
            errors[entry.step_key] = description
        return errors
    finally:
        instance.dispose()


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--date", "2026-13-01"], "2026-13-01"),
        (["--date", "yesterday"], "YYYY-MM-DD"),
        (["--providers", "lamdba"], "lambda"),
        (["--providers", ","], "valid"),
        (["--source", "web"], "archive, live"),
        (["--source", "live", "--date", "2025-06-01"], "today"),
        (["--date", "2999-01-01"], "future"),
    ],
)
def test_run_rejects_bad_input_with_one_line(cli, home, args, needle):
    res = cli("run", *args)
    assert res.code == 2, res
    assert needle in res.err and len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.err


def test_commands_are_registered_once_however_often_main_runs(cli):
    from gpuprice.cli import app

    for _ in range(3):
        assert cli("workloads").code == 0
    names = [c.name for c in app.registered_commands]
    assert len(names) == len(set(names))
