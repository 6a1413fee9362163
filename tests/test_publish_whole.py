"""A whole build computed a chunk of offers at a time equals the warehouse's views computed at once.

The warehouse mixes what the chunking must keep right: AWS offers in several regions (a chunk can
hold part of a provider's regions, and an offer its provider's next page no longer lists must
still close), a region whose offers stop while the provider's other regions go on, a scheduled
price, a failed run, a replayed page, and a provider whose newest day is older than the
warehouse's. The reference is ``views.materialize_price_history`` (the views over the whole
history in one computation) run on a byte copy of the same warehouse.
"""

from __future__ import annotations

import datetime as dt
import random
import shutil
from pathlib import Path

import duckdb
import pytest

from gpuprice.warehouse import publish_whole
from gpuprice.warehouse.connection import connect_writer, limit_memory, spill_dir
from gpuprice.warehouse.views import materialize_price_history
from gpuprice.warehouse.writes import record_provider_run
from tests.test_publish_incremental import PROVIDERS, START, _offers, _write

TABLES = ("price_periods", "daily_price_rows")


def _warehouse(path: Path) -> None:
    rng = random.Random(7)
    con = connect_writer(path)
    try:
        for index in range(14):
            day = START + dt.timedelta(days=index)
            for provider in PROVIDERS:
                if provider == "runpod" and index > 11:
                    continue  # runpod's newest day is older than the warehouse's
                offers = _offers(rng, provider, index)
                if provider == "aws" and index >= 9:  # eu-west-1's offers stop; the others go on
                    offers = [o for o in offers if o.region != "eu-west-1"]
                if provider == "lambda" and index == 6:  # a scheduled price from a later date
                    offers += [
                        o.model_copy(
                            update={"effective_from": day + dt.timedelta(days=2), "usd_per_gpu_hour": 9.9}
                        )
                        for o in offers[:1]
                    ]
                observed = day - dt.timedelta(days=1) if provider == "runpod" and index == 5 else None
                _write(con, provider, day, offers, observed_on=observed)
        record_provider_run(
            con,
            provider="lambda",
            snapshot_date=START + dt.timedelta(days=14),
            source="archive",
            status="failed",
            offers=0,
            error="timeout",
            report=None,
            started_at=dt.datetime(2026, 9, 15, tzinfo=dt.UTC),
        )
        con.execute("CHECKPOINT")
    finally:
        con.close()


def _rows(path: Path) -> dict[str, list]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {t: con.execute(f"SELECT * FROM main.{t} ORDER BY ALL").fetchall() for t in TABLES}
    finally:
        con.close()


@pytest.mark.parametrize(("chunk_rows", "chunks"), [(1, 5), (10**9, 1)])  # 5 (provider, region) pairs
def test_chunked_build_equals_the_views_at_once(
    tmp_path: Path, monkeypatch, chunk_rows: int, chunks: int
) -> None:
    warehouse = tmp_path / "warehouse.duckdb"
    _warehouse(warehouse)
    reference, chunked = tmp_path / "reference.duckdb", tmp_path / "chunked.duckdb"
    shutil.copyfile(warehouse, reference)
    shutil.copyfile(warehouse, chunked)
    con = limit_memory(duckdb.connect(str(reference)), spill_dir(reference))
    try:
        materialize_price_history(con)
    finally:
        con.close()
    monkeypatch.setattr(publish_whole, "CHUNK_ROWS", chunk_rows)
    con = limit_memory(duckdb.connect(str(chunked)), spill_dir(chunked))
    try:
        parts = publish_whole.materialize(con, tmp_path / "scratch.duckdb", spill_dir(chunked))
    finally:
        con.close()
    assert parts == chunks
    expected, got = _rows(reference), _rows(chunked)
    assert expected["price_periods"] and expected["daily_price_rows"]
    for table in TABLES:
        assert got[table] == expected[table], table


def test_chunks_pack_pairs_in_order_up_to_the_limit() -> None:
    pairs = [("aws", "a", 5), ("aws", "b", 5), ("aws", "c", 20), ("lambda", None, 3)]
    assert publish_whole.chunks(pairs, 10) == [
        [("aws", "a"), ("aws", "b")],
        [("aws", "c")],
        [("lambda", None)],
    ]
    assert publish_whole.chunks(pairs, 100) == [[p[:2] for p in pairs]]
    assert publish_whole.chunks([], 10) == []
