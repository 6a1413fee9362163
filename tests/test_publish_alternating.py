"""Publishing by two alternating copies: ``analytics.duckdb`` links to one, the next publish updates
the other in place (no byte copy of the history), unless a reader still holds it.

Readers that opened the old copy keep a consistent view across two publishes (in another process:
DuckDB's lock on the copy; in this one: its open file), a publish killed mid-update leaves the
published copy whole and the next one rebuilds the half-updated copy, and restated days, real
``gpuprice run`` warehouses and DuckLake warehouses end with a copy equal to one built whole.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_publish_incremental import (
    KILLED_PUBLISH,
    PROVIDERS,
    START,
    _assert_same_as_whole,
    _offers,
    _rows,
    _write,
)

from gpuprice.warehouse import publish
from gpuprice.warehouse.connection import connect_reader, connect_writer
from gpuprice.warehouse.publish import copy_files, current_copy, publish_analytics_copy

# An analyst in another process: opens the copy, reads, holds it until told, reads again.
ANALYST = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from gpuprice.warehouse.connection import connect_reader
    con = connect_reader(Path(sys.argv[1]))
    query = "SELECT count(*), sum(usd_per_gpu_hour), max(date) FROM analytics.daily_prices"
    print(repr(con.execute(query).fetchone()), flush=True)
    sys.stdin.readline()
    print(repr(con.execute(query).fetchone()), flush=True)
    """
)
VIEW = "SELECT count(*), sum(usd_per_gpu_hour), max(date) FROM analytics.daily_prices"


def _day(con, index: int, rng: random.Random) -> None:
    for provider in PROVIDERS:
        _write(con, provider, START + dt.timedelta(days=index), _offers(rng, provider, index))


def _inode(path: Path) -> tuple[int, int]:
    found = path.stat()
    return found.st_dev, found.st_ino


def test_publishes_alternate_between_two_copies_updated_in_place(tmp_path: Path):
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    first, second = copy_files(copy)
    rng = random.Random(5)
    con = connect_writer(wh)
    try:
        _day(con, 0, rng)
        publish_analytics_copy(con, wh, copy)
        assert (publish.last_method, current_copy(copy)) == ("whole", first)
        assert second.read_bytes() == first.read_bytes()  # its twin, for the next publish
        for index in (1, 2, 3):
            standby = first if current_copy(copy) == second else second
            before = _inode(standby)
            _day(con, index, rng)
            publish_analytics_copy(con, wh, copy)
            assert publish.last_method == "in_place" and current_copy(copy) == standby
            assert _inode(standby) == before == _inode(copy)  # the same file, updated; now published
            assert not os.access(copy, os.W_OK) or os.geteuid() == 0
            assert copy.stat().st_mode & 0o777 == 0o444
        # a restated day: day 1 written again with other prices, after both copies published it
        _write(con, "lambda", START + dt.timedelta(days=1), _offers(rng, "lambda", 30))
        publish_analytics_copy(con, wh, copy)
        delta = publish.last_delta
        assert (
            publish.last_method == "in_place" and delta is not None and delta.partitions == 1 + len(PROVIDERS)
        )
        _assert_same_as_whole(con, tmp_path, copy)
        publish_analytics_copy(con, wh, copy)  # the other copy gets the restated day too
        _assert_same_as_whole(con, tmp_path, copy)
        assert sorted(p.name for p in tmp_path.glob(".analytics*")) == sorted([first.name, second.name])
    finally:
        con.close()


def test_a_reader_in_another_process_keeps_its_copy_across_two_publishes(tmp_path: Path):
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    rng = random.Random(6)
    con = connect_writer(wh)
    try:
        for index in range(3):
            _day(con, index, rng)
            publish_analytics_copy(con, wh, copy)
        held = current_copy(copy)
        assert held is not None
        held_inode = _inode(held)
        analyst = subprocess.Popen(
            [sys.executable, "-c", ANALYST, str(copy)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            seen = analyst.stdout.readline().strip()
            assert seen.startswith("(")
            _day(con, 3, rng)
            publish_analytics_copy(con, wh, copy)  # the other copy, updated in place
            assert publish.last_method == "in_place"
            _day(con, 4, rng)
            # the reader's copy is the standby now: DuckDB's lock refuses the writer, so the new
            # copy is made beside it and renamed over its name; the reader keeps its file
            publish_analytics_copy(con, wh, copy)
            assert publish.last_method == "byte_copy" and current_copy(copy) == held
            assert _inode(held) != held_inode
            analyst.stdin.write("\n")
            analyst.stdin.flush()
            assert analyst.stdout.readline().strip() == seen  # the same consistent view
        finally:
            analyst.communicate(timeout=60)
        assert analyst.returncode == 0
        _assert_same_as_whole(con, tmp_path, copy)
        _day(con, 5, rng)
        publish_analytics_copy(con, wh, copy)  # the reader gone: in place again
        assert publish.last_method == "in_place"
        _assert_same_as_whole(con, tmp_path, copy)
    finally:
        con.close()


def test_a_reader_in_this_process_keeps_its_copy_across_two_publishes(tmp_path: Path):
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    rng = random.Random(7)
    con = connect_writer(wh)
    try:
        for index in range(3):
            _day(con, index, rng)
            publish_analytics_copy(con, wh, copy)
        reader = connect_reader(copy)  # DuckDB's file locks are per process: they do not tell
        try:
            seen = reader.execute(VIEW).fetchone()
            for index in (3, 4):
                _day(con, index, rng)
                publish_analytics_copy(con, wh, copy)
            assert publish.last_method == "byte_copy"  # the held copy was not written in place
            assert reader.execute(VIEW).fetchone() == seen
        finally:
            reader.close()
        _assert_same_as_whole(con, tmp_path, copy)
    finally:
        con.close()


@pytest.mark.slow
@pytest.mark.parametrize("step", ["_sync_tables", "_recompute", "record_state"])
def test_a_publish_killed_mid_update_in_place_leaves_the_published_copy_whole(tmp_path: Path, step: str):
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    rng = random.Random(8)
    con = connect_writer(wh)
    for index in range(3):
        _day(con, index, rng)
        publish_analytics_copy(con, wh, copy)
    published = current_copy(copy)
    before = _rows(copy)
    _day(con, 3, rng)
    con.close()

    killed = subprocess.run(
        [sys.executable, "-c", KILLED_PUBLISH, str(tmp_path), step],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -9, killed.stderr
    assert current_copy(copy) == published and _rows(copy) == before  # analysts read the previous copy

    con = connect_writer(wh)
    try:
        publish_analytics_copy(con, wh, copy)
        # a half-updated copy is not trusted: rebuilt from the published one; one killed after
        # its new state was recorded (only the link was missing) is whole, and is updated
        expected = "in_place" if step == "record_state" else "byte_copy"
        assert publish.last_method == expected and current_copy(copy) != published
        _assert_same_as_whole(con, tmp_path, copy)
        _day(con, 4, rng)
        publish_analytics_copy(con, wh, copy)
        assert publish.last_method == "in_place"
        _assert_same_as_whole(con, tmp_path, copy)
    finally:
        con.close()


def test_a_missing_or_foreign_standby_copy_is_rebuilt(tmp_path: Path):
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    rng = random.Random(9)
    con = connect_writer(wh)
    try:
        for index in range(2):
            _day(con, index, rng)
            publish_analytics_copy(con, wh, copy)
        first, second = copy_files(copy)
        assert current_copy(copy) == second
        first.unlink()
        _day(con, 2, rng)
        publish_analytics_copy(con, wh, copy)
        assert publish.last_method == "byte_copy" and current_copy(copy) == first
        second.chmod(0o644)
        second.write_bytes(b"not a database")
        _day(con, 3, rng)
        publish_analytics_copy(con, wh, copy)
        assert publish.last_method == "byte_copy" and current_copy(copy) == second
        _assert_same_as_whole(con, tmp_path, copy)
        # a copy published some other way (a plain file): it is the previous copy to update
        plain = tmp_path / "plain.duckdb"
        plain.write_bytes(copy.read_bytes())
        os.replace(plain, copy)
        _day(con, 4, rng)
        publish_analytics_copy(con, wh, copy)
        assert publish.last_method == "byte_copy"
        _assert_same_as_whole(con, tmp_path, copy)
    finally:
        con.close()


def test_a_ducklake_warehouse_publishes_by_alternating_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from test_warehouse import use_engine

    use_engine("ducklake", tmp_path, monkeypatch)
    wh, copy = tmp_path / "warehouse.duckdb", tmp_path / "analytics.duckdb"
    rng = random.Random(10)
    con = connect_writer(wh)
    try:
        methods = []
        for index in range(4):
            _day(con, index, rng)
            publish_analytics_copy(con, wh, copy)
            methods.append(publish.last_method)
        assert methods == ["whole", "in_place", "in_place", "in_place"]
        _write(con, "aws", START + dt.timedelta(days=1), _offers(rng, "aws", 20))  # a restated day
        publish_analytics_copy(con, wh, copy)
        _assert_same_as_whole(con, tmp_path, copy)
        reader = connect_reader(copy)
        try:
            assert reader.execute(VIEW).fetchone()[2] == START + dt.timedelta(days=3)
        finally:
            reader.close()
    finally:
        con.close()


@pytest.mark.slow
def test_daily_gpuprice_runs_publish_in_place_around_a_reader(home: Path, cli, tmp_path: Path):
    """Real runs (the sample archive replayed on consecutive dates, a date run again): the copy
    each publishes equals one built whole, and a reader holding a copy keeps its view."""
    copy = home / "analytics.duckdb"
    days = [dt.date(2026, 9, 1) + dt.timedelta(days=i) for i in range(5)]
    providers = "lambda,runpod,aws"

    def run(day: dt.date) -> None:
        result = cli("run", "--date", day.isoformat(), "--providers", providers, "--no-reports")
        assert result.code == 0, result.err

    for day in days[:3]:
        run(day)
    assert publish.last_method == "in_place"
    analyst = subprocess.Popen(
        [sys.executable, "-c", ANALYST, str(copy)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        seen = analyst.stdout.readline().strip()
        assert seen.startswith("(")
        run(days[3])
        run(days[1])  # a day run again after it was published: restated
        assert publish.last_method == "byte_copy"  # the reader's copy was left alone
        analyst.stdin.write("\n")
        analyst.stdin.flush()
        assert analyst.stdout.readline().strip() == seen
    finally:
        analyst.communicate(timeout=60)
    run(days[4])
    assert publish.last_method == "in_place"
    con = connect_writer(home / "warehouse.duckdb")
    try:
        whole = tmp_path / "whole" / "analytics.duckdb"
        publish_analytics_copy(con, home / "warehouse.duckdb", whole)
        assert publish.last_method == "whole"
    finally:
        con.close()
    assert _rows(copy) == _rows(whole)
