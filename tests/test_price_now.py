"""One rule of "now" (issue 34): every output names the same current prices and never an old one.

Unit checks of the daily series (warehouse/price_series.py) on a hand-made warehouse, then the
sample archive run once: `run`, `rank`, `history`, analytics.cheapest_by_gpu, `estimate` and the
weekly report name the same cheapest H100 on 2026-10-06, and no recommendation rests on a
price older than the limit.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import duckdb
import pytest

from conftest import D1, make_offer
from gpuprice.warehouse.connection import connect_writer
from gpuprice.warehouse.price_series import newest_pages, series_days
from gpuprice.warehouse.queries import price_history_series
from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS, current_sql, is_current
from gpuprice.warehouse.writes import record_provider_run, replace_snapshot_partition


def _write(con, provider: str, day: dt.date, price: float, observed_on: dt.date | None = None) -> None:
    replace_snapshot_partition(
        con,
        provider=provider,
        snapshot_date=day,
        offers=[make_offer(provider=provider, sku=f"{provider}-h100", usd_per_gpu_hour=price)],
        source="archive",
        raw_sha256="ab" * 32,
        parser_version="test/1",
        observed_on=observed_on,
    )
    record_provider_run(
        con,
        provider=provider,
        snapshot_date=day,
        source="archive",
        status="success",
        offers=1,
        report=None,
        error=None,
        started_at=dt.datetime.now(dt.UTC),
        observed_on=observed_on or day,
    )


def test_the_rule_in_python_and_sql_agree() -> None:
    day = dt.date(2026, 10, 6)
    con = duckdb.connect()
    for age in (-1, 0, MAX_PRICE_AGE_DAYS, MAX_PRICE_AGE_DAYS + 1, 171):
        in_sql = con.execute(f"SELECT {current_sql(str(age))}").fetchone()[0]
        assert in_sql == is_current(day - dt.timedelta(days=age), day), age
    assert (
        is_current(None, day) is False and con.execute(f"SELECT {current_sql('NULL')}").fetchone()[0] is False
    )


def test_the_series_has_every_day_and_says_who_joined_and_left(tmp_path: Path) -> None:
    con = connect_writer(tmp_path / "warehouse.duckdb")
    try:
        start = D1
        _write(con, "nebius", start, 3.85)
        _write(con, "lambda", start, 3.99)
        late = start + dt.timedelta(days=20)
        _write(con, "azure", late, 12.29)  # a hyperscaler's page, after the others passed the limit
        _write(con, "nebius", late, 3.85, observed_on=start)  # an old page replayed: not current
        _write(con, "runpod", late + dt.timedelta(days=3), 2.69)
        end = late + dt.timedelta(days=3)
        frame = price_history_series(con, "h100-sxm", "on_demand", start, end)
        assert frame["age_days"].max() <= MAX_PRICE_AGE_DAYS
        days = series_days(frame.to_dict("records"), start, end)
        assert [d.date for d in days] == [start + dt.timedelta(days=n) for n in range((end - start).days + 1)]
        cheapest = {d.date: (d.cheapest.provider if d.cheapest else None) for d in days}
        assert (
            cheapest[start] == "nebius"
            and cheapest[start + dt.timedelta(days=MAX_PRICE_AGE_DAYS)] == "nebius"
        )
        gap = start + dt.timedelta(days=MAX_PRICE_AGE_DAYS + 1)
        assert cheapest[gap] is None  # every page too old: said, not carried forward
        gone = next(d for d in days if d.date == gap)
        assert gone.left == ["lambda", "nebius"] and not gone.joined
        jump = next(d for d in days if d.date == late)
        assert jump.cheapest is not None and jump.cheapest.provider == "azure" and jump.joined == ["azure"]
        assert cheapest[end] == "runpod"
        assert next(d for d in days if d.date == end).prices["azure"].age_days == 3
        # Nothing current in a window: which providers are too old, and by how much.
        assert newest_pages(con, "h100-sxm", "on_demand", late - dt.timedelta(days=1)) == [
            ("lambda", start, 19),
            ("nebius", start, 19),
        ]
    finally:
        con.close()


def test_history_json_csv_and_table_show_the_same_days(
    home: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every form of `history` has every day of the window; a day without a current price is one
    row of nulls (empty CSV cells) with the reason the table prints, and the same cheapest."""
    import csv
    import io

    from gpuprice.warehouse.publish import publish_analytics_copy

    warehouse = home / "warehouse.duckdb"
    con = connect_writer(warehouse)
    try:
        _write(con, "nebius", D1, 3.85)
        _write(con, "lambda", D1, 3.99)
        late = D1 + dt.timedelta(days=MAX_PRICE_AGE_DAYS + 4)  # 3 days without a current price before it
        _write(con, "runpod", late, 2.69)
        publish_analytics_copy(con, warehouse, home / "analytics.duckdb")
    finally:
        con.close()
    window = ["--gpu", "h100-sxm", "--since", D1.isoformat(), "--until", late.isoformat()]
    every_day = [(D1 + dt.timedelta(days=n)).isoformat() for n in range((late - D1).days + 1)]

    res = cli("history", *window, "--format", "json")
    assert res.code == 0, res.err
    points = json.loads(res.out)
    assert sorted({p["date"] for p in points}) == every_day
    gap = (D1 + dt.timedelta(days=MAX_PRICE_AGE_DAYS + 1)).isoformat()
    empty = [p for p in points if p["date"] == gap]
    assert empty == [
        {
            "date": gap,
            "provider": None,
            "gpu_count": None,
            "tier": "on_demand",
            "usd_per_gpu_hour": None,
            "observed_on": None,
            "age_days": None,
            "community": None,
            "cheapest": False,
            "source": None,
            "providers_change": "-lambda -nebius",
            "reason": "no current price",
        }
    ]
    assert sum(p["reason"] is not None for p in points) == 3
    first = [p for p in points if p["date"] == D1.isoformat()]
    assert [(p["provider"], p["usd_per_gpu_hour"], p["cheapest"], p["reason"]) for p in first] == [
        ("lambda", 3.99, False, None),
        ("nebius", 3.85, True, None),
    ]
    assert [p["providers_change"] for p in points if p["date"] == late.isoformat()] == ["+runpod"]

    res = cli("history", *window, "--format", "csv")
    assert res.code == 0, res.err
    table_rows = list(csv.DictReader(io.StringIO(res.out)))
    assert len(table_rows) == len(points)
    for row, point in zip(table_rows, points, strict=True):
        assert row == {k: "" if v is None else str(v) for k, v in point.items()}

    monkeypatch.setenv("COLUMNS", "200")
    res = cli("history", *window)
    dated = [line.split() for line in res.out.splitlines() if re.match(r"\d{4}-\d\d-\d\d ", line)]
    assert [line[0] for line in dated] == every_day
    cheapest = {p["date"]: f"{p['provider']} {p['usd_per_gpu_hour']:.2f}" for p in points if p["cheapest"]}
    for line in dated:
        named = " ".join(line[1:4]) if line[1] == "no" else " ".join(line[1:3])
        assert named == cheapest.get(line[0], "no current price"), line


def test_rank_and_the_best_offer_views_agree_when_a_cited_report_is_cheapest(
    home: Path, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One rule of which rows count (v_snapshots_in_force): a cited public report dated after
    lambda's last scrape, cheaper than every scraped H100, is the cheapest in rank and in
    analytics.cheapest_by_gpu alike (before, rank read scraped snapshots only: runpod's $2.49)."""
    from gpuprice.warehouse.publish import publish_analytics_copy

    day = D1 + dt.timedelta(days=2)
    warehouse = home / "warehouse.duckdb"
    con = connect_writer(warehouse)
    try:
        _write(con, "lambda", D1, 2.99)  # lambda's last scrape, two days before
        _write(con, "runpod", day, 2.49)  # the cheapest scraped H100 on the day
        publish_analytics_copy(con, warehouse, home / "analytics.duckdb")
    finally:
        con.close()
    report = tmp_path / "report.csv"
    report.write_text(
        "provider,gpu,gpu_count,tier,usd_per_gpu_hour,observed_on\n"
        f"lambda,H100 SXM,1,on_demand,1.99,{day.isoformat()}\n"
    )
    imported = cli("import-observations", str(report))
    assert imported.code == 0 and "1 added" in imported.out, imported.err

    view = cli(
        "sql",
        "select provider, usd_per_gpu_hour, source from analytics.cheapest_by_gpu"
        f" where gpu = 'h100-sxm' and tier = 'on_demand' and snapshot_date = '{day}'",
        "--format",
        "json",
    )
    assert [(r["provider"], float(r["usd_per_gpu_hour"]), r["source"]) for r in json.loads(view.out)] == [
        ("lambda", 1.99, "public_report")
    ]
    ranked = cli(
        "rank",
        "--params-b",
        "1",
        "--method",
        "lora",
        "--tokens",
        "1M",
        "--date",
        day.isoformat(),
        "--format",
        "json",
    )
    assert ranked.code == 0, ranked.err
    h100 = [r for r in json.loads(ranked.out) if r["gpu"] == "h100-sxm" and r["gpu_count"] == 1]
    cheapest = min(h100, key=lambda r: r["usd_per_gpu_hour"])
    assert (cheapest["provider"], cheapest["usd_per_gpu_hour"], cheapest["observed_on"]) == (
        "lambda",
        1.99,
        day.isoformat(),
    )
    assert {(r["provider"], r["usd_per_gpu_hour"]) for r in h100} == {("lambda", 1.99), ("runpod", 2.49)}


# ---------------------------------------------------------------- the sample archive, end to end


@pytest.fixture(scope="module")
def sample_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("now") / "home"


@pytest.mark.slow
def test_every_output_names_the_same_cheapest_h100_and_no_old_price(
    sample_home: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUPRICE_HOME", str(sample_home))
    monkeypatch.delenv("GPUPRICE_WORKLOADS", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    day = "2026-10-06"
    run = cli("run", "--source", "archive", "--date", day)
    assert run.code == 0, run.err
    headline = re.search(r"h100-sxm\s+\$(\d+\.\d\d)/GPU-h\s+(\w+)", run.out)
    assert headline, run.out
    price, provider = float(headline.group(1)), headline.group(2)

    view = cli(
        "sql",
        f"select provider, usd_per_gpu_hour from analytics.cheapest_by_gpu where gpu = 'h100-sxm'"
        f" and tier = 'on_demand' and snapshot_date = '{day}'",
        "--format",
        "json",
    )
    assert [(r["provider"], float(r["usd_per_gpu_hour"])) for r in json.loads(view.out)] == [
        (provider, price)
    ]

    history = json.loads(cli("history", "--gpu", "h100-sxm", "--since", day, "--format", "json").out)
    assert [(r["provider"], r["usd_per_gpu_hour"]) for r in history if r["cheapest"]] == [(provider, price)]
    table = cli("history", "--gpu", "h100-sxm", "--since", "2026-09-06").out
    dated = [line for line in table.splitlines() if re.match(r"\d{4}-\d\d-\d\d ", line)]
    assert len(dated) == 31 and dated[-1].startswith(f"{day}  {provider} {price:.2f}")  # every day
    assert sum("no current price" in line for line in dated) >= 1  # a day without one says so
    empty = cli("history", "--gpu", "a10", "--since", "2026-09-20")
    assert empty.code == 0 and empty.out == ""
    assert len(empty.err.strip().splitlines()) == 1 and "lambda 37 days (page of 2026-08-30)" in empty.err
    for bad in ("-1", "x"):
        bad_age = cli("history", "--gpu", "a10", "--max-age-days", bad)
        assert bad_age.code == 2 and len(bad_age.err.strip().splitlines()) == 1 and bad in bad_age.err

    estimate = json.loads(
        cli(
            "estimate", "--gpu", "h100-sxm", "--params-b", "8", "--method", "lora", "--tokens", "1B", "--json"
        ).out
    )
    assert (estimate["offer"]["provider"], estimate["usd_per_gpu_hour"]) == (provider, price)

    # rank: among the offers it ranks for a one-GPU job, the cheapest on-demand H100 price is the same.
    ranked = json.loads(
        cli(
            "rank",
            "--params-b",
            "8",
            "--method",
            "lora",
            "--tokens",
            "1B",
            "--tier",
            "on_demand",
            "--format",
            "json",
        ).out
    )
    h100 = [r for r in ranked if r["gpu"] == "h100-sxm" and r["gpu_count"] == 1]
    assert min((r["usd_per_gpu_hour"], r["provider"]) for r in h100) == (price, provider)
    assert all(r["price_age_days"] <= MAX_PRICE_AGE_DAYS for r in ranked)

    index = (sample_home / "reports" / "2026-W41" / "summary.md").read_text()
    row = next(line for line in index.splitlines() if line.startswith("| h100-sxm |"))
    assert f"${price:.2f}" in row and provider in row

    # No recommendation anywhere rests on an old price: every workload's best offer is current.
    con = duckdb.connect(str(sample_home / "analytics.duckdb"), read_only=True)
    try:
        worst = con.execute(
            f"""SELECT max(snapshot_date - observed_on) FROM analytics.analytics.workload_best_by_provider
                WHERE snapshot_date = DATE '{day}'"""
        ).fetchone()[0]
        assert worst <= MAX_PRICE_AGE_DAYS
    finally:
        con.close()
    for workload in ("llama-3.1-70b-qlora", "llama-3.1-8b-lora", "llama-3.1-8b-qlora"):
        best = json.loads(cli("rank", "--workload", workload, "--top", "1", "--format", "json").out)[0]
        assert best["price_age_days"] <= MAX_PRICE_AGE_DAYS
        page = (sample_home / "reports" / "2026-W41" / f"{workload}.md").read_text()
        assert f"**Recommended: {best['provider']} · {best['gpu_count']}× {best['gpu']}" in page
