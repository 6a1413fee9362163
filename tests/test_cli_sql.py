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


def test_several_statements_are_refused_in_one_line(cli, published):
    res = cli("sql", "select 1; select 2")
    assert res.code == 2 and res.out == ""
    assert len(res.err.strip().splitlines()) == 1 and "one statement" in res.err and "2" in res.err
    assert "several are refused" in cli("sql", "--help").out


@pytest.mark.parametrize("columns", [100, 80])
def test_table_fits_the_terminal_and_rounds_numbers(cli, published, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    res = cli("sql", "select * from analytics.latest_prices")
    assert res.code == 0, res.err
    assert max(len(line) for line in res.out.splitlines()) <= columns, res.out
    assert "--wide shows every column" in " ".join(res.out.split())
    wide = cli("sql", "select * from analytics.latest_prices", "--wide")
    assert "usd_per_gpu_hour" in wide.out and "--wide shows" not in wide.out
    res = cli("sql", "select 8.6 / 3 as third, 12 as n, 'text' as t")
    lines = res.out.splitlines()
    assert "2.867" in res.out and "2.8666" not in res.out
    # numbers right-aligned: the value ends where its header ends
    header, value = lines[0], lines[-1]
    assert header.index("third") + len("third") == value.index("2.867") + len("2.867")
