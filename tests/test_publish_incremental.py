"""Incremental publishing: a copy updated with what changed equals a copy built whole.

Each scenario writes days into a warehouse (new days, a day replaced, a past day backfilled, a
provider's day removed, a failed run, imported history, a scheduled price, a replayed page),
publishes after each step, and compares every analytics view and derived table of the updated
copy with a copy built whole from the same warehouse.
"""

from __future__ import annotations

import datetime as dt
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from conftest import make_offer
from gpuprice.warehouse import partition_fingerprints, publish
from gpuprice.warehouse.connection import connect_reader, connect_writer
from gpuprice.warehouse.publish import publish_analytics_copy
from gpuprice.warehouse.views import ANALYTICS_VIEWS
from gpuprice.warehouse.writes import record_provider_run, replace_snapshot_partition

START = dt.date(2026, 9, 1)
PROVIDERS = ("lambda", "runpod", "aws")
GPUS = ("h100-sxm", "a100-80gb-sxm", "l40s")
COMPARED = (*ANALYTICS_VIEWS, "main.price_periods", "main.daily_price_rows")


def _failed_run(con, provider: str, day: dt.date, started_at: dt.datetime) -> None:
    """A run of ``provider`` on ``day`` that failed (a timeout) and wrote no offers."""
    record_provider_run(
        con,
        provider=provider,
        snapshot_date=day,
        source="archive",
        status="failed",
        offers=0,
        error="timeout",
        report=None,
        started_at=started_at,
    )


def _offers(rng: random.Random, provider: str, day_index: int) -> list:
    """A provider's offers on a day: a fixed pool, some missing, prices stepping now and then."""
    offers = []
    for i in range(6):
        if rng.random() < 0.15:
            continue  # not listed today
        step = (day_index + i) // (2 + i % 3)
        price = round(1.0 + i * 0.5 + (step % 3) * 0.1, 2)
        offers.append(
            make_offer(
                provider=provider,
                sku=f"{provider}-{i}",
                gpu=GPUS[i % 3],
                gpu_count=1 + i % 2,
                usd_per_gpu_hour=price,
                region=("us-east-1", "eu-west-1", None)[i % 3] if provider == "aws" else None,
            )
        )
    return offers


def _write(con, provider: str, day: dt.date, offers: list, observed_on: dt.date | None = None) -> None:
    replace_snapshot_partition(
        con,
        provider=provider,
        snapshot_date=day,
        offers=offers,
        source="archive",
        raw_sha256=None,
        parser_version=None,
        observed_on=observed_on,
    )


def _rows(path: Path) -> dict[str, list]:
    reader = connect_reader(path)
    try:
        out = {}
        for name in COMPARED:
            relation = name if "." in name else f"analytics.{name}"
            columns = [d[0] for d in reader.execute(f"SELECT * FROM {relation} LIMIT 0").description]
            out[name] = reader.execute(f"SELECT {', '.join(columns)} FROM {relation} ORDER BY ALL").fetchall()
        return out
    finally:
        reader.close()


def _assert_same_as_whole(con, tmp_path: Path, copy: Path) -> None:
    whole = tmp_path / "whole" / "analytics.duckdb"
    whole.parent.mkdir(exist_ok=True)
    whole.unlink(missing_ok=True)
    publish_analytics_copy(con, tmp_path / "warehouse.duckdb", whole)
    assert publish.last_delta is None  # built whole
    updated, built = _rows(copy), _rows(whole)
    for name in COMPARED:
        assert updated[name] == built[name], name


def _publish(con, tmp_path: Path, copy: Path):
    publish_analytics_copy(con, tmp_path / "warehouse.duckdb", copy)
    return publish.last_delta


@pytest.mark.parametrize("seed", [1, 2])
def test_an_updated_copy_equals_one_built_whole(tmp_path: Path, seed: int):
    rng = random.Random(seed)
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    con = connect_writer(wh)
    try:
        for index in range(8):  # a first stretch, published whole
            for provider in PROVIDERS:
                _write(con, provider, START + dt.timedelta(days=index), _offers(rng, provider, index))
        assert _publish(con, tmp_path, copy) is None

        # new days, one provider at a time and all at once
        for index in range(8, 11):
            for provider in PROVIDERS:
                _write(con, provider, START + dt.timedelta(days=index), _offers(rng, provider, index))
            delta = _publish(con, tmp_path, copy)
            # the copy updated in place is two publishes behind (the other one is being read)
            # (after the whole build, the other copy is its twin: one publish behind)
            behind = 1 if index == 8 else 2
            assert delta is not None and delta.partitions == behind * len(PROVIDERS)
            assert publish.last_method == "in_place"
            assert delta.window_rows < con.execute("SELECT count(*) FROM price_snapshots").fetchone()[0]
        _assert_same_as_whole(con, tmp_path, copy)

        # a day in the middle replaced with other prices, and a provider's past day removed
        _write(con, "lambda", START + dt.timedelta(days=4), _offers(rng, "lambda", 40))
        con.execute("DELETE FROM price_snapshots WHERE provider = 'runpod' AND snapshot_date = ?", [START])
        con.execute("DELETE FROM provider_runs WHERE provider = 'runpod' AND snapshot_date = ?", [START])
        partition_fingerprints.refresh(
            con, [("runpod", START)]
        )  # a write outside the writes keeps them itself
        assert _publish(con, tmp_path, copy) is not None
        _assert_same_as_whole(con, tmp_path, copy)

        # one provider runs ahead; another fails a day; a page replayed on the next date
        day = START + dt.timedelta(days=11)
        _write(con, "aws", day, _offers(rng, "aws", 11))
        _failed_run(con, "lambda", day, dt.datetime(2026, 9, 12, tzinfo=dt.UTC))
        _write(con, "runpod", day, _offers(rng, "runpod", 10), observed_on=day - dt.timedelta(days=1))
        assert _publish(con, tmp_path, copy) is not None
        _assert_same_as_whole(con, tmp_path, copy)

        # a scheduled price (from a later date) and a backfilled day before the first one
        scheduled = [
            o.model_copy(update={"effective_from": day + dt.timedelta(days=3), "usd_per_gpu_hour": 9.99})
            for o in _offers(rng, "lambda", 12)[:2]
        ]
        _write(con, "lambda", day + dt.timedelta(days=1), _offers(rng, "lambda", 12) + scheduled)
        _write(con, "aws", START - dt.timedelta(days=3), _offers(rng, "aws", -3))
        assert _publish(con, tmp_path, copy) is not None
        _assert_same_as_whole(con, tmp_path, copy)

        # nothing changed: nothing rewritten (once both copies hold the last change)
        _publish(con, tmp_path, copy)
        delta = _publish(con, tmp_path, copy)
        assert delta is not None and (delta.partitions, delta.window_rows) == (0, 0)
        _assert_same_as_whole(con, tmp_path, copy)
    finally:
        con.close()


def test_a_copy_from_another_schema_or_format_is_built_whole(tmp_path: Path, monkeypatch):
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    con = connect_writer(wh)
    try:
        rng = random.Random(3)
        _write(con, "lambda", START, _offers(rng, "lambda", 0))
        assert _publish(con, tmp_path, copy) is None
        _write(con, "lambda", START + dt.timedelta(days=1), _offers(rng, "lambda", 1))
        monkeypatch.setattr(publish.publish_delta, "PUBLISH_FORMAT", 99)
        assert _publish(con, tmp_path, copy) is None
        _assert_same_as_whole(con, tmp_path, copy)
        copy.chmod(0o644)
        copy.write_bytes(b"not a database at all")
        assert _publish(con, tmp_path, copy) is not None  # the other copy, whole, is updated
        _assert_same_as_whole(con, tmp_path, copy)
        for path in publish.copy_files(copy):  # neither copy usable: built whole
            path.chmod(0o644)
            path.write_bytes(b"not a database at all")
        assert _publish(con, tmp_path, copy) is None
        _assert_same_as_whole(con, tmp_path, copy)
    finally:
        con.close()


# Publishes the warehouse's new day and is killed (SIGKILL) at a given step of the update.
KILLED_PUBLISH = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from gpuprice.warehouse import publish_delta
    from gpuprice.warehouse.connection import connect_writer
    from gpuprice.warehouse.publish import publish_analytics_copy

    home, step = Path(sys.argv[1]), sys.argv[2]
    real = getattr(publish_delta, step)

    def killed(*args, **kwargs):
        result = real(*args, **kwargs)   # the step's work done, the copy not yet renamed
        os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(publish_delta, step, killed)
    con = connect_writer(home / "warehouse.duckdb")
    publish_analytics_copy(con, home / "warehouse.duckdb", home / "analytics.duckdb")
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("step", ["_sync_tables", "_recompute", "record_state"])
def test_a_publish_killed_midway_leaves_the_previous_copy_and_a_rerun_converges(tmp_path: Path, step: str):
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    rng = random.Random(4)
    con = connect_writer(wh)
    for index in range(6):
        for provider in PROVIDERS:
            _write(con, provider, START + dt.timedelta(days=index), _offers(rng, provider, index))
    publish_analytics_copy(con, wh, copy)
    before = _rows(copy)
    for provider in PROVIDERS:
        _write(con, provider, START + dt.timedelta(days=6), _offers(rng, provider, 6))
    con.close()
    # no standby copy: the update is made in a temp file (test_publish_alternating kills one in place)
    for path in publish.copy_files(copy):
        if path != publish.current_copy(copy):
            path.unlink()

    killed = subprocess.run(
        [sys.executable, "-c", KILLED_PUBLISH, str(tmp_path), step],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -9, killed.stderr
    assert list(tmp_path.glob(".analytics-*.duckdb.tmp")), "the kill left the half-built copy behind"
    assert _rows(copy) == before  # analysts still read the previous copy, whole

    con = connect_writer(wh)
    try:
        delta = _publish(con, tmp_path, copy)  # the rerun starts again from the previous copy
        assert delta is not None and delta.partitions == len(PROVIDERS)
        assert not list(tmp_path.glob(".analytics-*.duckdb.tmp"))
        _assert_same_as_whole(con, tmp_path, copy)
    finally:
        con.close()
    assert (
        duckdb.connect(str(copy), read_only=True)
        .execute("SELECT count(*) FROM main.price_snapshots")
        .fetchone()
    )


PER_DAY_TABLES = ("provider_runs", "raw_pages", "quarantine")


def _table_rows(path: Path, table: str) -> list:
    reader = connect_reader(path)
    try:
        return reader.execute(f"SELECT * FROM main.{table} ORDER BY ALL").fetchall()
    finally:
        reader.close()


def test_per_day_tables_are_updated_by_their_differing_days(tmp_path: Path):
    """Runs, raw pages and quarantined rows are kept per provider and day: an update replaces the
    days whose rows differ (a row added, changed in a column the run status does not show,
    removed, duplicated; a quarantined row without a date) and the copy holds the warehouse's."""
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    rng = random.Random(5)
    con = connect_writer(wh)

    def page(provider: str, day: dt.date, sha: str) -> None:
        con.execute(
            "INSERT INTO raw_pages (provider, url, snapshot_date, fetched_at, sha256, bytes, stored_path) "
            "VALUES (?, 'https://example.test/p', ?, TIMESTAMPTZ '2026-09-01 00:00:00+00', ?, 10, 'raw/x')",
            [provider, day, sha],
        )

    def quarantined(provider: str, day: dt.date | None, row: str) -> None:
        con.execute(
            "INSERT INTO quarantine (snapshot_date, provider, raw_row, reason, source, quarantined_at) "
            "VALUES (?, ?, ?, 'no price', 'scrape', TIMESTAMPTZ '2026-09-01 00:00:00+00')",
            [day, provider, row],
        )

    try:
        for index in range(4):
            day = START + dt.timedelta(days=index)
            for provider in PROVIDERS:
                _write(con, provider, day, _offers(rng, provider, index))
                page(provider, day, f"{provider}{index}")
            quarantined("lambda", day, f"row {index}")
        quarantined("aws", None, "undated")
        assert _publish(con, tmp_path, copy) is None
        steps = [
            lambda: page("aws", START + dt.timedelta(days=4), "new"),
            lambda: con.execute(
                "UPDATE provider_runs SET offers = offers + 1 WHERE provider = 'runpod' AND snapshot_date = ?",
                [START],
            ),
            lambda: con.execute(
                "DELETE FROM raw_pages WHERE provider = 'lambda' AND snapshot_date = ?",
                [START + dt.timedelta(days=1)],
            ),
            lambda: quarantined("lambda", START + dt.timedelta(days=2), "row 2"),  # a duplicate row
            lambda: quarantined("aws", None, "undated too"),
            lambda: con.execute("DELETE FROM quarantine WHERE snapshot_date IS NULL AND raw_row = 'undated'"),
        ]
        for step in steps:
            step()
            assert _publish(con, tmp_path, copy) is not None
            assert publish.last_method == "in_place"
            for table in PER_DAY_TABLES:
                expected = con.execute(f"SELECT * FROM main.{table} ORDER BY ALL").fetchall()
                assert _table_rows(copy, table) == expected, table
        _assert_same_as_whole(con, tmp_path, copy)
    finally:
        con.close()
