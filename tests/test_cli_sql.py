"""gpuprice sql: read-only, one-line refusals, three output formats."""

from __future__ import annotations

import json

import pytest

from conftest import D1, make_offer
from gpuprice.settings import Settings
from gpuprice.warehouse.connection import connect_writer
from gpuprice.warehouse.publish import publish_analytics_copy
from gpuprice.warehouse.writes import replace_snapshot_partition


@pytest.fixture
def published(home):
    con = connect_writer(Settings.from_env().warehouse_path)
    replace_snapshot_partition(
        con,
        provider="lambda",
        snapshot_date=D1,
        source="archive",
        raw_sha256=None,
        parser_version=None,
        offers=[make_offer(), make_offer(sku="b", usd_per_gpu_hour=5.4325)],
    )
    publish_analytics_copy(con, Settings.from_env().warehouse_path, Settings.from_env().analytics_path)
    con.close()
    return home


def test_select_in_three_formats(cli, published):
    res = cli(
        "sql", "select sku, usd_per_gpu_hour from analytics.latest_prices order by sku", "--format", "json"
    )
    assert res.code == 0, res.err
    assert json.loads(res.out) == [
        {"sku": "b", "usd_per_gpu_hour": 5.4325},
        {"sku": "gpu_1x_h100_sxm", "usd_per_gpu_hour": 2.99},
    ]
    res = cli("sql", "select count(*) as n from analytics.latest_prices", "--format", "csv")
    assert res.out == "n\n2\n"  # \n line endings, not the csv module's \r\n
    res = cli("sql", "select count(*) as n from analytics.latest_prices")
    assert res.code == 0 and "2" in res.out


@pytest.mark.parametrize(
    "query, word",
    [
        ("delete from price_snapshots", "DELETE"),
        ("insert into price_snapshots select * from price_snapshots", "INSERT"),
        ("create table t as select 1", "CREATE"),
        ("attach '/tmp/x.duckdb' as x", "ATTACH"),
        ("copy price_snapshots to '/tmp/out.csv'", "COPY"),
        ("install httpfs", "LOAD"),
        ("load httpfs", "LOAD"),
        ("set enable_external_access = true", "SET"),
        ("select 1; drop table price_snapshots", "DROP"),
    ],
)
def test_writes_and_escapes_are_refused(cli, published, query, word):
    res = cli("sql", query)
    assert res.code == 2
    assert word in res.err and "read-only" in res.err
    assert len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.err


def test_file_reading_outside_the_data_folder_is_refused(cli, published, tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    res = cli("sql", f"select * from read_csv('{secret}')")
    assert res.code == 2 and "refused" in res.err and len(res.err.strip().splitlines()) == 1
    res = cli("sql", "select * from read_text('/etc/passwd')")
    assert res.code == 2


def test_bad_sql_and_missing_warehouse(cli, home):
    res = cli("sql", "select 1")
    assert res.code == 2 and "run `gpuprice run` first" in res.err


def test_bad_format(cli, published):
    res = cli("sql", "select 1", "--format", "xml")
    assert res.code == 2 and "table, csv, json" in res.err


def test_syntax_error_is_one_line(cli, published):
    res = cli("sql", "selec nothing")
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1
