"""Honest data (issue 13): observation dates, price bases, merging imports, one offer line, daily series."""

from __future__ import annotations

import datetime as dt
import json
import types
from pathlib import Path

import duckdb
import pytest

from conftest import D1, D2, D3, D4, make_offer
from gpuprice.warehouse.connection import connect_writer
from gpuprice.warehouse.writes import record_provider_run, replace_snapshot_partition


def write(con, provider, day, offers, observed_on=None):
    return replace_snapshot_partition(
        con,
        provider=provider,
        snapshot_date=day,
        offers=offers,
        source="archive",
        raw_sha256="ab" * 32,
        parser_version="test/1",
        observed_on=observed_on,
    )


def rows(con, sql, *params):
    return con.execute(sql, list(params)).fetchall()


@pytest.fixture
def con(tmp_path: Path):
    c = connect_writer(tmp_path / "warehouse.duckdb")
    yield c
    c.close()


# ------------------------------------------------------------------ observed_on and staleness


def test_a_replayed_page_keeps_its_own_date_and_is_stale(con):
    from gpuprice.warehouse.queries import offers_as_of, stale_providers

    write(con, "lambda", D4, [make_offer()], observed_on=dt.date(2026, 8, 30))
    write(con, "nebius", D4, [make_offer(provider="nebius", sku="h100")])
    assert rows(con, "SELECT provider, observed_on FROM price_snapshots ORDER BY 1") == [
        ("lambda", dt.date(2026, 8, 30)),
        ("nebius", D4),
    ]
    assert stale_providers(con, D4) == {"lambda"}
    fresh = dict(rows(con, "SELECT provider, days_behind FROM analytics.provider_freshness"))
    assert fresh == {"lambda": (D4 - dt.date(2026, 8, 30)).days, "nebius": 0}
    assert set(offers_as_of(con, D4)["observed_on"].dt.date) == {dt.date(2026, 8, 30), D4}
    with pytest.raises(ValueError, match="cannot be filed"):
        write(con, "lambda", D1, [make_offer()], observed_on=D2)  # never a newer observation


def test_freshness_shows_no_old_error_for_a_healthy_provider(con):
    now = dt.datetime.now(dt.UTC)
    for day, status in ((D1, "failed"), (D2, "success")):
        record_provider_run(
            con,
            provider="lambda",
            snapshot_date=day,
            source="archive",
            status=status,
            offers=1,
            report=None,
            error="boom" if status == "failed" else None,
            started_at=now,
            observed_on=day if status == "success" else None,
        )
    assert rows(con, "SELECT last_status, last_error, stale FROM analytics.provider_freshness") == [
        ("success", None, False)
    ]


def test_the_staleness_rule_is_one_constant():
    from gpuprice.models import ranking
    from gpuprice.reports import loading
    from gpuprice.warehouse import staleness

    assert ranking.STALE_AFTER_DAYS is staleness.STALE_AFTER_DAYS
    assert loading.STALE_AFTER_DAYS is staleness.STALE_AFTER_DAYS
    assert staleness.is_stale(D1, D1 + dt.timedelta(days=staleness.STALE_AFTER_DAYS)) is False
    assert staleness.is_stale(D1, D1 + dt.timedelta(days=staleness.STALE_AFTER_DAYS + 1)) is True
    assert staleness.is_stale(D1, D1, last_status="failed") is True


# ------------------------------------------------------------------ price basis


def test_nebius_from_floor_is_from_and_never_a_headline(con):
    from pathlib import Path as P

    from gpuprice.scrapers.providers import nebius
    from gpuprice.warehouse.queries import headline_offers, offers_as_of

    page = P(__file__).parent.parent / "scrapers" / "sample_archive" / "nebius" / "2026-10-06.html"
    offers = nebius.parse(page.read_bytes(), observed_on=dt.date(2026, 10, 6)).offers
    floors = {(o.gpu, o.tier): o.usd_per_gpu_hour for o in offers if o.price_basis == "from"}
    assert floors[("b200", "spot")] == 0.99
    assert all(o.price_basis == "list" for o in offers if o.tier == "on_demand" and o.gpu == "h100-sxm")

    cheap_floor = make_offer(
        provider="nebius", sku="b200", gpu="b200", usd_per_gpu_hour=0.99, price_basis="from"
    )
    listed = make_offer(provider="lambda", sku="b200x8", gpu="b200", gpu_count=8, usd_per_gpu_hour=4.99)
    write(con, "nebius", D1, [cheap_floor])
    write(con, "lambda", D1, [listed])
    assert [r[1] for r in headline_offers(con, ("b200",))] == ["lambda"]
    assert rows(con, "SELECT provider FROM analytics.cheapest_by_gpu WHERE gpu = 'b200'") == [("lambda",)]
    assert set(offers_as_of(con, D1)["price_basis"]) == {"list"}
    assert set(offers_as_of(con, D1, ("list", "from"))["price_basis"]) == {"list", "from"}


# ------------------------------------------------------------------ one offer line, periods


def test_a_scheduled_price_closes_the_period_it_replaces(con):
    current = make_offer(provider="nebius", sku="NVIDIA HGX H100", gpu_count=8, usd_per_gpu_hour=3.85)
    scheduled = make_offer(
        provider="nebius", sku="NVIDIA HGX H100", gpu_count=8, usd_per_gpu_hour=4.5, effective_from=D3
    )
    write(con, "nebius", D1, [current, scheduled])
    write(con, "nebius", D4, [current, scheduled])
    periods = rows(
        con, "SELECT usd_per_gpu_hour::DOUBLE, valid_from, valid_to FROM analytics.price_history ORDER BY 2"
    )
    assert periods == [(3.85, D1, D3), (4.5, D3, None)]


def test_public_reports_and_scrapes_share_one_offer_line(con):
    import pandas as pd

    from gpuprice.warehouse.history_writes import replace_bundled_public_reports

    report = dict(
        snapshot_date=D1,
        provider="nebius",
        sku="H100 SXM x8 [on_demand]",
        gpu="h100-sxm",
        gpu_raw="H100 SXM",
        gpu_count=8,
        tier="on_demand",
        community=False,
        usd_per_gpu_hour=2.95,
        price_basis="list",
    )
    replace_bundled_public_reports(con, pd.DataFrame([report]), [])
    write(
        con,
        "nebius",
        D3,
        [make_offer(provider="nebius", sku="NVIDIA HGX H100", gpu_count=8, usd_per_gpu_hour=3.5)],
    )
    history = rows(
        con, "SELECT offer_key, usd_per_gpu_hour::DOUBLE, valid_to FROM analytics.price_history ORDER BY 2"
    )
    assert len({key for key, _, _ in history}) == 1
    assert [(price, valid_to) for _, price, valid_to in history] == [(2.95, D3), (3.5, None)]
    open_periods = rows(
        con,
        "SELECT provider, gpu, gpu_count, tier, community, commitment_months, region, count(*)"
        " FROM analytics.price_history WHERE valid_to IS NULL GROUP BY ALL HAVING count(*) > 1",
    )
    assert open_periods == []


# ------------------------------------------------------------------ daily series and cheapest


def test_daily_prices_carry_forward_with_age_and_cheapest_skips_old_prices(con):
    from gpuprice.warehouse.staleness import MAX_OFFER_AGE_DAYS

    late = D1 + dt.timedelta(days=MAX_OFFER_AGE_DAYS + 3)
    write(
        con,
        "coreweave",
        D1,
        [make_offer(provider="coreweave", sku="hgx", gpu_count=8, usd_per_gpu_hour=6.155)],
    )
    write(con, "lambda", D1, [make_offer(usd_per_gpu_hour=2.99)], observed_on=D1)
    write(con, "lambda", late, [make_offer(usd_per_gpu_hour=2.99)], observed_on=D1)  # an old page replayed
    write(
        con,
        "coreweave",
        late,
        [make_offer(provider="coreweave", sku="hgx", gpu_count=8, usd_per_gpu_hour=6.155)],
    )
    ages = rows(
        con,
        "SELECT date, age_days FROM analytics.daily_prices WHERE provider = 'lambda' ORDER BY date",
    )
    assert ages[0] == (D1, 0) and ages[-1] == (late, (late - D1).days)
    assert len(ages) == (late - D1).days + 1
    cheapest = dict(
        rows(con, "SELECT snapshot_date, provider FROM analytics.cheapest_by_gpu WHERE tier = 'on_demand'")
    )
    assert cheapest[D1] == "lambda"
    assert cheapest[late] == "coreweave"  # Lambda's price is from a page weeks old: not "cheapest" today


def test_cheapest_tie_break_does_not_depend_on_load_order(tmp_path: Path):
    results = []
    for order in (("lambda", "nebius"), ("nebius", "lambda")):
        c = connect_writer(tmp_path / f"{order[0]}.duckdb")
        for provider in order:
            write(
                c, provider, D1, [make_offer(provider=provider, sku=f"{provider}-h100", usd_per_gpu_hour=2.5)]
            )
        results.append(rows(c, "SELECT * FROM analytics.cheapest_by_gpu"))
        c.close()
    assert results[0] == results[1] and results[0][0][3] == "lambda"


# ------------------------------------------------------------------ migration


def test_v4_migration_dates_replayed_rows_from_their_page(tmp_path: Path):
    from gpuprice.warehouse.schema import MIGRATIONS, migrate

    path = tmp_path / "v3.duckdb"
    old = duckdb.connect(str(path))
    old.execute("CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TIMESTAMPTZ NOT NULL)")
    from gpuprice.warehouse.schema import create_v1

    create_v1(old)
    old.execute("INSERT INTO schema_version VALUES (1, now())")
    for version in (2, 3):
        MIGRATIONS[version](old)
        old.execute("INSERT INTO schema_version VALUES (?, now())", [version])
    old.execute(
        """INSERT INTO price_snapshots (snapshot_date, provider, sku, gpu, gpu_raw, gpu_count, tier, community,
           usd_per_gpu_hour, source, raw_sha256, ingested_at, price_basis)
           VALUES ('2026-10-06', 'lambda', 'x', 'h100-sxm', 'H100', 1, 'on_demand', false, 2.99, 'archive', 'aa', now(), 'list'),
                  ('2024-01-01', 'nebius', 'B200 x1 [preemptible_from]', 'b200', 'B200', 1, 'spot', false, 0.99,
                   'public_report', NULL, now(), 'list')"""
    )
    old.execute(
        """INSERT INTO raw_pages VALUES ('lambda', 'archive://lambda/2026-08-30.html', '2026-10-06', now(),
           NULL, NULL, NULL, 'aa', 10, '/x', NULL)"""
    )
    migrate(old)
    migrate(old)  # idempotent
    assert rows(
        old, "SELECT provider, observed_on, price_basis, source_file FROM price_snapshots ORDER BY 1"
    ) == [
        ("lambda", dt.date(2026, 8, 30), "list", "archive://lambda/2026-08-30.html"),
        ("nebius", dt.date(2024, 1, 1), "from", "bundled:observed_prices.csv"),
    ]
    old.close()


# ------------------------------------------------------------------ imports


def test_bad_import_rows_name_row_and_column(tmp_path: Path):
    from gpuprice.scrapers.observations import load_observations

    csv = tmp_path / "obs.csv"
    csv.write_text(
        "provider,gpu,gpu_count,tier,usd_per_gpu_hour,observed_on\n"
        "lambda,H100 SXM,8,on_demand,2.99,2026-09-15\n"
        "lambda,H100 SXM,eight,on_demand,2.99,2026-09-15\n"
        "lambda,H100 SXM,8,on_demand,2.99,15/09/2026\n"
    )
    frame, quarantined = load_observations(csv)
    assert len(frame) == 1
    assert [reason.split(":")[0] for _, _, reason in quarantined] == [
        "row 3, column gpu_count",
        "row 4, column observed_on",
    ]


@pytest.mark.slow
def test_run_import_and_history_on_the_sample_archive(
    home: Path, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    res = cli("run", "--date", "2026-10-06", "--providers", "lambda,nebius,runpod", "--no-reports")
    assert res.code == 0, res.err
    lambda_line = next(line for line in res.out.splitlines() if line.startswith("lambda"))
    assert "page of 2026-08-30, 37 days old (stale: over 14 days, its prices are not used)" in lambda_line

    def public_rows() -> int:
        con = duckdb.connect(str(home / "analytics.duckdb"), read_only=True)
        try:
            return con.execute(
                "SELECT count(*) FROM analytics.analytics.price_snapshots WHERE source = 'public_report'"
            ).fetchone()[0]
        finally:
            con.close()

    bundled = public_rows()
    mine = tmp_path / "my.csv"
    mine.write_text(
        "provider,gpu,gpu_count,tier,usd_per_gpu_hour,observed_on\nlambda,H100 SXM,8,on_demand,2.79,2026-09-15\n"
    )
    first = cli("import-observations", str(mine))
    assert first.code == 0 and "1 added, 0 updated, 0 unchanged" in first.out
    second = cli("import-observations", str(mine))
    assert second.code == 0 and "0 added, 0 updated, 1 unchanged" in second.out
    assert public_rows() == bundled + 1
    assert cli("run", "--date", "2026-10-06", "--providers", "lambda", "--no-reports").code == 0
    assert public_rows() == bundled + 1  # the daily run reloads only the bundled history

    res = cli("history", "--gpu", "h100-sxm", "--since", "2025-10-01", "--format", "json")
    assert res.code == 0, res.err
    series = json.loads(res.out)
    assert {"date", "provider", "gpu_count", "tier", "usd_per_gpu_hour", "observed_on", "age_days"} <= set(
        series[0]
    )
    assert "2026-10-06" in res.err  # the default end, stated
    by_date: dict[str, list[dict]] = {}
    for point in series:
        by_date.setdefault(point["date"], []).append(point)
    for points in by_date.values():
        if points[0]["reason"] is not None:  # a day without a current price: one row of nulls
            assert len(points) == 1 and points[0]["usd_per_gpu_hour"] is None and not points[0]["cheapest"]
            continue
        best = [p for p in points if p["cheapest"]]
        assert len(best) == 1 and best[0]["usd_per_gpu_hour"] == min(p["usd_per_gpu_hour"] for p in points)
    assert all(p["age_days"] <= 14 for p in series if p["reason"] is None)
    monkeypatch.setenv("COLUMNS", "80")  # the table fits the terminal; --wide shows every provider
    table = cli("history", "--gpu", "h100-sxm", "--since", "2025-10-01")
    assert table.code == 0 and max(len(line) for line in table.out.splitlines()) <= 80, table.out
    assert "cheapest" in table.out.splitlines()[1]
    assert cli("history", "--gpu", "h100-sxmm").code == 2


# ------------------------------------------------------------------ the scheduled path


def test_models_sensor_loads_reference_data_first_when_the_catalog_never_ran():
    import dagster as dg

    from gpuprice.pipelines.defs import schedules

    instance = dg.DagsterInstance.ephemeral()
    context = types.SimpleNamespace(
        instance=instance,
        dagster_run=types.SimpleNamespace(tags={"dagster/partition": "2026-10-06"}, run_id="r1"),
    )
    (request,) = schedules._models_request(context)
    assert request.job_name == "reference_data"
    assert request.tags[schedules.MODELS_PARTITION_TAG] == "2026-10-06"
    from gpuprice.pipelines.definitions import defs

    # The daily scrape reloads the reference data in the same run, so a scheduled day has it.
    scrape = defs.resolve_job_def("daily_scrape")
    assert {dg.AssetKey(k) for k in schedules.REFERENCE_ASSETS} <= scrape.asset_layer.executable_asset_keys


def test_catalog_check_names_an_empty_catalog_and_reference_data_fixes_it(tmp_path: Path):
    import dagster as dg

    from gpuprice.pipelines.definitions import defs
    from gpuprice.pipelines.defs import schedules
    from gpuprice.pipelines.resources import default_resources

    home = tmp_path / "home"
    resources = default_resources(home=home)
    home.mkdir()
    con = connect_writer(home / "warehouse.duckdb")
    write(con, "lambda", dt.date(2026, 10, 6), [make_offer()])
    con.close()
    instance = dg.DagsterInstance.ephemeral()
    everything = [*defs.assets, *defs.asset_checks]
    result = dg.materialize(
        everything,
        selection=dg.AssetSelection.assets("offers_with_specs"),
        partition_key="2026-10-06",
        resources=resources,
        instance=instance,
        raise_on_error=False,
    )
    (check,) = result.get_asset_check_evaluations()
    assert not check.passed and "dim_gpu is empty" in check.description
    assert schedules.reference_data_missing(instance)
    reference = dg.materialize(
        everything,
        selection=dg.AssetSelection.assets(*schedules.REFERENCE_ASSETS),
        resources=resources,
        instance=instance,
    )
    assert reference.success and not schedules.reference_data_missing(instance)
    result = dg.materialize(
        everything,
        selection=dg.AssetSelection.assets("offers_with_specs"),
        partition_key="2026-10-06",
        resources=resources,
        instance=instance,
        raise_on_error=False,
    )
    (check,) = result.get_asset_check_evaluations()
    assert check.passed


def test_the_product_runs_sql_only_from_the_warehouse_layer():
    import re

    root = Path(__file__).resolve().parent.parent
    offenders = []
    for folder in ("reports", "pipelines", "models", "scrapers", "gpuprice"):
        for path in (root / folder).rglob("*.py"):
            if path.name == "sql.py" and path.parent.name == "commands":
                continue  # `gpuprice sql` runs the user's query
            if re.search(r"\bSELECT\b[\s\S]{0,200}?\bFROM\b", path.read_text()):
                offenders.append(str(path.relative_to(root)))
    assert offenders == []
