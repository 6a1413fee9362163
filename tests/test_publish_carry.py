"""Incremental publishing of a new day reads each continuing offer from its last page only.

An offer whose latest price period began before the changed dates and was last seen before them
is read from that last page (its "carried" page), not from the period's start, and the period
computed from there is joined to the stored one. These scenarios make every way a carried
period can go: seen again at the same price (the period grows), at another price, not listed
(closed by the provider's page), back after a gap at the same price (the gap's days filled in),
listed under another SKU at the same price (the whole period's daily rows relabelled), a day
restated after it was published, a provider missing a day, a failed run, a replayed page; the
copy updated after each day must equal one built whole from the same warehouse.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path

import pandas as pd
from test_publish_incremental import _assert_same_as_whole, _failed_run, _publish, _write

from conftest import make_offer, make_public_report_row
from gpuprice.warehouse.connection import connect_reader, connect_writer
from gpuprice.warehouse.history_writes import merge_public_reports
from gpuprice.warehouse.sql_files import OFFER_KEY

START = dt.date(2026, 6, 1)
GPUS = ("h100-sxm", "a100-80gb-sxm")
REGIONS = ("us-east-1", "eu-west-1", "ap-south-1")


def _offers(rng: random.Random, provider: str, index: int) -> list:
    """A provider's day: per (GPU, region) offer two SKUs at one price (either or both listed, so
    the SKU an offer is read under changes while its price holds), gaps of a few days, and
    prices stepping now and then."""
    offers = []
    for g, gpu in enumerate(GPUS):
        for r, region in enumerate(REGIONS if provider == "aws" else (None,)):
            key = g * 3 + r
            if (index + key) % 9 in (4, 5) and key % 2:  # away two days in nine, back as it was
                continue
            if rng.random() < 0.1:
                continue
            price = round(1.5 + key * 0.25 + 0.1 * (((index + key) // (3 + key % 4)) % 3), 2)
            listed = rng.choice((("a",), ("b",), ("a", "b")))
            offers.extend(
                make_offer(
                    provider=provider,
                    sku=f"{provider}-{gpu}-{sku}",
                    gpu=gpu,
                    gpu_raw=f"{gpu} {sku}",
                    usd_per_gpu_hour=price,
                    region=region,
                )
                for sku in listed
            )
    return offers


def test_new_days_continue_the_stored_periods_and_equal_a_whole_build(tmp_path: Path):
    rng = random.Random(7)
    copy = tmp_path / "analytics.duckdb"
    con = connect_writer(tmp_path / "warehouse.duckdb")
    carried = appended = written = 0
    try:
        for index in range(10):
            for provider in ("aws", "lambda"):
                _write(con, provider, START + dt.timedelta(days=index), _offers(rng, provider, index))
        assert _publish(con, tmp_path, copy) is None
        for index in range(10, 24):
            day = START + dt.timedelta(days=index)
            _write(con, "aws", day, _offers(rng, "aws", index))
            if index % 5 != 2:  # lambda misses a day now and then
                _write(con, "lambda", day, _offers(rng, "lambda", index))
            if index == 15:  # a day restated after it was published
                _write(con, "aws", day - dt.timedelta(days=2), _offers(rng, "aws", index + 40))
            if index == 18:  # a failed run, and a page replayed under the next date
                _failed_run(con, "lambda", day, dt.datetime(2026, 6, 19, tzinfo=dt.UTC))
                _write(
                    con, "aws", day, _offers(rng, "aws", index - 1), observed_on=day - dt.timedelta(days=1)
                )
            delta = _publish(con, tmp_path, copy)
            assert delta is not None
            carried += delta.carried
            appended += delta.appended_periods
            written += delta.periods
            # the window holds the carried pages and the new days, not the periods since they began
            rows = con.execute("SELECT count(*) FROM price_snapshots").fetchone()[0]
            if index >= 20:
                assert delta.window_rows < rows / 4
            if index % 3 == 0 or index in (15, 16, 18, 19):
                _assert_same_as_whole(con, tmp_path, copy)
        _assert_same_as_whole(con, tmp_path, copy)
        assert carried > 0
        # a continued period is updated in place, not appended (out of GPU order)
        assert 0 < appended < written
    finally:
        con.close()


def test_a_carried_period_relabels_its_earlier_days_when_its_newest_sku_changes(tmp_path: Path):
    copy = tmp_path / "analytics.duckdb"
    con = connect_writer(tmp_path / "warehouse.duckdb")

    def day(index: int, sku: str) -> None:
        offer = make_offer(provider="lambda", sku=sku, gpu_raw=f"H100 {sku}", usd_per_gpu_hour=2.5)
        _write(con, "lambda", START + dt.timedelta(days=index), [offer])

    try:
        for index in range(5):
            day(index, "x")
        assert _publish(con, tmp_path, copy) is None
        for index in range(5, 9):  # the same price under another SKU: one period, read as the newest
            day(index, "y" if index % 2 else "x")
            delta = _publish(con, tmp_path, copy)
            assert delta is not None and delta.carried == 1
            _assert_same_as_whole(con, tmp_path, copy)
        reader = connect_reader(copy)
        try:
            skus = reader.execute("SELECT DISTINCT sku FROM main.daily_price_rows").fetchall()
        finally:
            reader.close()
        assert skus == [("x",)]  # day 8 is read under x: every day of the one period says so
    finally:
        con.close()


def test_offers_back_after_a_gap_new_offers_and_an_old_backfill_restart_as_a_whole_build_would(
    tmp_path: Path,
):
    """An update reads whole only the stored periods that reach a cutoff; an offer whose last
    period ended before its provider's cutoff (back after days away, at its old price or
    another) or that has none (new) is looked up alone. Its last period may end before every
    cutoff, or between another provider's earlier cutoff (a backfilled day) and its own."""
    copy = tmp_path / "analytics.duckdb"
    con = connect_writer(tmp_path / "warehouse.duckdb")

    def offer(provider: str, sku: str, gpu: str, price: float, region: str | None = None):
        return make_offer(
            provider=provider, sku=sku, gpu=gpu, gpu_raw=gpu, usd_per_gpu_hour=price, region=region
        )

    def lambda_day(index: int) -> list:
        offers = [offer("lambda", "steady", "h100-sxm", 2.5)]
        if index < 3 or index >= 12:  # away nine days, back at its old price
            offers.append(offer("lambda", "same", "a100-80gb-sxm", 1.5))
        if index < 9 or index >= 13:  # away four days, back at another price
            offers.append(offer("lambda", "moved", "l40s", 1.0 if index < 9 else 1.25))
        if index >= 14:  # new
            offers.append(offer("lambda", "new", "h200", 3.5))
        return offers

    def aws_day(index: int, price: float = 4.0) -> list:
        return [offer("aws", "p5", "h100-sxm", price, region="us-east-1")]

    try:
        for index in range(8):
            _write(con, "lambda", START + dt.timedelta(days=index), lambda_day(index))
            _write(con, "aws", START + dt.timedelta(days=index), aws_day(index))
        assert _publish(con, tmp_path, copy) is None
        for index in range(8, 18):
            day = START + dt.timedelta(days=index)
            _write(con, "lambda", day, lambda_day(index))
            _write(con, "aws", day, aws_day(index))
            if index in (13, 16):  # an old aws day restated: aws's cutoff before lambda's closed periods end
                _write(con, "aws", START + dt.timedelta(days=4 if index == 13 else 10), aws_day(index, 4.5))
            delta = _publish(con, tmp_path, copy)
            assert delta is not None and delta.offers > 0
            _assert_same_as_whole(con, tmp_path, copy)
    finally:
        con.close()


def test_imported_rows_on_scraped_days_stay_out_of_force_in_the_window(tmp_path: Path):
    """A user's public reports of a scraped offer in the window: on the days it was scraped (the
    scrape wins its day) and on a day whose run failed (the report is in force). The scratch
    database holds the runs from each provider's window start on (the views join a run to its own
    provider and date's rows only, and every window row is on or after the start); the copy
    updated day by day equals one built whole."""
    copy = tmp_path / "analytics.duckdb"
    con = connect_writer(tmp_path / "warehouse.duckdb")
    reports: list[dict] = []

    def report(index: int) -> None:
        day = START + dt.timedelta(days=index)
        reports.append(make_public_report_row(day, 1.99))
        merge_public_reports(con, pd.DataFrame(reports), [], source_file="mine.csv")

    def scraped(index: int) -> None:
        _write(
            con,
            "lambda",
            START + dt.timedelta(days=index),
            [make_offer(provider="lambda", usd_per_gpu_hour=2.5)],
        )

    try:
        for index in range(5):
            scraped(index)
            report(index)
        assert _publish(con, tmp_path, copy) is None
        for index in range(5, 11):
            if index == 8:
                _failed_run(
                    con, "lambda", START + dt.timedelta(days=index), dt.datetime(2026, 6, 9, tzinfo=dt.UTC)
                )
            else:
                scraped(index)
            report(index)
            assert _publish(con, tmp_path, copy) is not None
            _assert_same_as_whole(con, tmp_path, copy)
    finally:
        con.close()


def test_a_continued_period_updated_in_place_sets_every_column_but_the_offer_key(tmp_path: Path):
    """publish/periods_update names the columns it sets: every column of the copy's periods but
    the two that find the row (offer and start) and the offer key's columns (equal on both sides
    of that join), so a column the views add is not left stale."""
    con = connect_writer(tmp_path / "warehouse.duckdb")
    try:
        _write(con, "lambda", START, [make_offer(provider="lambda")])
        assert _publish(con, tmp_path, tmp_path / "analytics.duckdb") is None
    finally:
        con.close()
    reader = connect_reader(tmp_path / "analytics.duckdb")
    try:
        columns = {d[0] for d in reader.execute("SELECT * FROM main.price_periods LIMIT 0").description}
    finally:
        reader.close()
    text = (Path(__file__).resolve().parents[1] / "warehouse/sql/publish/periods_update.sql").read_text()
    assigned = set(re.findall(r"(\w+) = k\.\1\b", text.split("FROM")[0]))
    offer_key_columns = {c.strip() for c in OFFER_KEY.split(",")}
    assert assigned == columns - {"offer_key", "valid_from"} - offer_key_columns
