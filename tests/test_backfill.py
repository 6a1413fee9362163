"""`gpuprice backfill`: one Dagster run over a range, equal to per-date runs, safe to interrupt."""

from __future__ import annotations

import datetime as dt
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from gpuprice.pipelines.orchestration import date_range
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE, archived_pages
from gpuprice.scrapers.offer import PROVIDERS

# Crosses page changes (several providers have recordings dated 2026-08-30) and one date that a
# check holds back (crusoe's 2026-08-30 page lists far fewer offers than the one before).
START, END = dt.date(2026, 8, 28), dt.date(2026, 9, 1)

# Everything a run writes, without the wall-clock columns.
TABLES = {
    "price_snapshots": "SELECT * EXCLUDE (ingested_at) FROM price_snapshots ORDER BY ALL",
    "quarantine": "SELECT * EXCLUDE (quarantined_at) FROM quarantine ORDER BY ALL",
    "provider_runs": "SELECT * EXCLUDE (started_at, finished_at, run_id) FROM provider_runs ORDER BY ALL",
    "workload_rankings": "SELECT * EXCLUDE (computed_at) FROM workload_rankings ORDER BY ALL",
    "raw_pages": "SELECT * EXCLUDE (fetched_at, stored_path) FROM raw_pages ORDER BY ALL",
}


def warehouse_rows(home: Path) -> dict[str, list]:
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        return {name: con.execute(sql).fetchall() for name, sql in TABLES.items()}
    finally:
        con.close()


def assert_same_rows(got: dict[str, list], expected: dict[str, list]) -> None:
    """Every table equal; on a difference, each differing table's rows only one side has (rows
    hold lists, so they are compared by their text)."""
    differing = []
    for table, rows in expected.items():
        if got[table] == rows:
            continue
        want, have = {repr(r) for r in rows}, {repr(r) for r in got[table]}
        differing.append(
            f"{table}: {len(rows)} rows expected, {len(got[table])} got;"
            f" {len(want - have)} only expected, e.g. {sorted(want - have)[:2]};"
            f" {len(have - want)} only got, e.g. {sorted(have - want)[:2]}"
        )
    assert not differing, "\n".join(differing)


def backfill(home: Path, start: dt.date = START, end: dt.date = END, **options):
    from gpuprice.pipelines.orchestration import run_backfill

    return run_backfill(start, end, home=home, archive_dir=SAMPLE_ARCHIVE, **{"source": "archive", **options})


def test_every_partitioned_asset_backfills_a_range_in_one_run():
    import dagster as dg

    from gpuprice.pipelines.definitions import defs

    partitioned = [a for a in defs.assets if isinstance(a, dg.AssetsDefinition) and a.partitions_def]
    # every provider's three stages (one step each provider) and the four downstream assets
    assert sum(len(a.keys) for a in partitioned) >= 3 * len(PROVIDERS) + 4
    for asset in partitioned:
        policy = asset.backfill_policy
        assert policy is not None and policy.max_partitions_per_run is None, asset.keys


@pytest.mark.slow
def test_a_backfill_equals_per_date_runs(tmp_path: Path):
    from gpuprice.pipelines.orchestration import run_day

    per_date = tmp_path / "per_date"
    for day in date_range(START, END):
        run_day(
            day,
            source="archive",
            home=per_date,
            archive_dir=SAMPLE_ARCHIVE,
            render_reports=False,
            progress=lambda m: None,
        )
    ranged = tmp_path / "ranged"
    summary = backfill(ranged)
    expected = warehouse_rows(per_date)
    assert_same_rows(warehouse_rows(ranged), expected)
    con = duckdb.connect(str(ranged / "warehouse.duckdb"), read_only=True)
    loaded = con.execute(
        "SELECT DISTINCT snapshot_date, provider FROM price_snapshots WHERE source = 'archive'"
    ).fetchall()
    con.close()
    dates = {day for day, _ in loaded}
    assert dates == set(date_range(START, END))
    # Every provider with a recorded page on or before the range's first date (azure's only
    # sample page is later: its dates fail alike in both, as the row comparison above shows).
    recorded = {
        p for p in PROVIDERS if any(page.page_date <= START for page in archived_pages(SAMPLE_ARCHIVE, p))
    }
    assert {provider for _, provider in loaded} == recorded
    assert len(recorded) >= 9
    # The check that held crusoe's 2026-08-30 back in the daily run holds it back here too.
    crusoe = next(p for p in summary.providers if p.provider == "crusoe")
    assert crusoe.dates_failed == 1 and "no_sudden_drop" in (crusoe.first_error or "")
    parquet = sorted((ranged / "exports" / "price_snapshots").glob("snapshot_date=*/data.parquet"))
    assert len(parquet) == len(dates)
    assert (ranged / "analytics.duckdb").exists()
    assert_the_ui_shows_the_range(ranged, summary, recorded)

    # Idempotent: the same backfill again changes nothing; re-parsing the raw store neither.
    backfill(ranged)
    assert warehouse_rows(ranged) == expected
    reparsed = backfill(ranged, source="raw")
    assert warehouse_rows(ranged) == expected
    # azure never had a page for these dates: nothing to re-parse, its earlier failures stand.
    azure = next(p for p in reparsed.providers if p.provider == "azure")
    assert (azure.dates_not_stored, azure.dates_failed) == (len(dates), 0)


def assert_the_ui_shows_the_range(home: Path, summary, recorded: set[str]) -> None:
    """What the UI reads from the instance: the jobs' runs, every date's partition of each
    provider's snapshot and of the models filled by the range run, the raw and parsed stages not
    recorded per date (a range run selects the snapshots only), and one warning line in the scrape
    run's log for the date a check held back."""
    import dagster as dg

    from gpuprice.pipelines.asset_keys import provider_asset_key
    from gpuprice.pipelines.instance import dagster_home

    instance = dg.DagsterInstance.from_config(str(dagster_home(home)))
    try:
        assert [instance.get_run_by_id(r.run_id).job_name for r in summary.runs] == [
            "reference_data",
            "daily_scrape",
            "daily_models",
        ]
        scrape, models = summary.runs[1].run_id, summary.runs[2].run_id
        dates = {d.isoformat() for d in date_range(START, END)}

        def partitions(key: dg.AssetKey, run_id: str) -> set[str]:
            records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key), limit=1000)
            return {r.partition_key for r in records.records if r.run_id == run_id}

        for provider in recorded:
            assert partitions(provider_asset_key("snapshot", provider), scrape) == dates, provider
            assert partitions(provider_asset_key("raw", provider), scrape) == set(), provider
            assert partitions(provider_asset_key("parsed", provider), scrape) == set(), provider
        for key in ("offers_with_specs", "workload_rankings", "analytics_copy"):
            assert partitions(dg.AssetKey(key), models) == dates, key
        warnings = [
            e.user_message
            for e in instance.all_logs(scrape)
            if e.level == logging.WARNING and e.user_message.startswith("crusoe: ")
        ]
        assert len(warnings) == 1, warnings
        assert warnings[0].startswith("crusoe: 2026-08-30 held back, check failed: no_sudden_drop: ")
        assert "\n" not in warnings[0] and "the previous snapshot stays the latest" in warnings[0]
    finally:
        instance.dispose()


def _cli(home: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "GPUPRICE_HOME": str(home)}
    env.pop("GPUPRICE_ARCHIVE", None)
    return subprocess.Popen(
        [sys.executable, "-m", "gpuprice", "backfill", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _finish(process: subprocess.Popen, timeout: float = 600) -> bytes:
    """The stderr of a backfill process once it ends; killed (not left running) past ``timeout``."""
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"{' '.join(map(str, process.args))} ran over {timeout:g} s; killed") from None
    return err


def _error_lines(stderr: bytes) -> list[str]:
    return [line for line in stderr.decode(errors="replace").splitlines() if line.startswith("error:")]


@pytest.mark.slow
def test_a_killed_backfill_rerun_ends_identical_to_an_uninterrupted_one(tmp_path: Path):
    args = ("--from", "2026-08-01", "--to", "2026-10-06")
    reference = tmp_path / "reference"
    done = _cli(reference, *args)
    done_err = _finish(done)
    killed = tmp_path / "killed"
    victim = _cli(killed, *args)
    # Kill it mid-way: once pages of some providers are stored, i.e. inside the run's steps.
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and victim.poll() is None:
        stored = list((killed / "raw").glob("*/2026-10-06")) if (killed / "raw").exists() else []
        if len(stored) >= 3:
            break
        time.sleep(0.05)
    assert victim.poll() is None, "the backfill finished before it could be interrupted"
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    rerun = _cli(killed, *args)
    err = _finish(rerun)
    assert rerun.returncode == done.returncode, err
    # Both exit 1 (azure has no page for most dates): a step failing outside the providers (the
    # rankings, the analytics copy) would exit 1 too, so the error lines must match as well.
    assert _error_lines(err) == _error_lines(done_err), err
    assert_same_rows(warehouse_rows(killed), warehouse_rows(reference))


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--from", "2026-10-06", "--to", "2026-10-01"], "before --from"),
        (["--from", "2026-1-1", "--to", "2026-10-01"], "YYYY-MM-DD"),
        (["--from", "2025-05-02", "--to", "2025-05-10"], "first stored page (2025-05-29"),
        (["--from", "2025-04-30", "--to", "2025-05-10"], "first snapshot date 2025-05-01"),
        (["--from", "2026-05-01", "--to", "2026-06-01", "--providers", "runpod"], "2026-05-24, runpod"),
        (["--from", "2026-10-01", "--to", "2026-10-06", "--providers", "lamdba"], "lambda"),
        (["--from", "2026-10-01", "--to", "2026-10-06", "--source", "live"], "archive, raw"),
        (["--from", "2026-10-01", "--to", "2999-01-01"], "future"),
        (["--from", "2026-10-01", "--to", "2026-10-06", "--source", "raw"], "raw store"),
        (["--from", "2019-01-01", "--to", "2019-02-01"], "first snapshot date"),
    ],
)
def test_backfill_rejects_bad_input_with_one_line(cli, home, args, needle):
    res = cli("backfill", *args)
    assert res.code == 2, res
    assert needle in res.err and len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.err
