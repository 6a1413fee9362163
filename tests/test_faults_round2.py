"""Reliability round 2 (issue 20): each line of the independent attack, reproduced and held.

Every reproduction must end in a one-line error, a quarantined row (with its raw text) or the
right value, and none may lose or change stored data. The counts go to reliability.json
(section ``round2``): scenarios tried and passed, and rows checked/lost around the SQL attacks.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import D1, make_offer
from faults.pages import healthy_page
from faults.runs import environment, gpuprice
from faults.tally import Tally
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE
from gpuprice.scrapers.registry import provider_parser

TALLY = Tally("round2")
MODEL = ("--model", "meta-llama/Llama-3.1-8B", "--method", "full")
DAY = "2026-10-06"


@pytest.fixture(scope="module", autouse=True)
def _write_tally() -> Iterator[None]:
    yield
    TALLY.notes["scenarios"] = TALLY.inputs_tried
    TALLY.notes["scenarios_passed"] = TALLY.inputs_clean
    TALLY.write()


class _Scenario:
    """Counts one scenario as tried, and as passed only when the block finishes."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __enter__(self) -> None:
        TALLY.inputs_tried += 1
        TALLY.by_command[self.kind] += 1
        TALLY.fault(self.kind)

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            TALLY.inputs_clean += 1
        return False


def one_line_error(result, code: int = 2, *words: str) -> None:
    assert result.code == code, result
    assert "Traceback" not in result.err, result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1, result.err
    for word in words:
        assert word.lower() in lines[0].lower(), lines[0]


# ---------------------------------------------------------------------------------------------
# F3-F5, F7: the shared price reader, on each provider's own page
# ---------------------------------------------------------------------------------------------


def _lambda_page(old: str, new: str, count: int = 1) -> bytes:
    body, _ = healthy_page("lambda", DAY)
    text = body.decode()
    assert old in text
    return text.replace(old, new, count).encode()


def _coreweave_page(old: str, new: str, count: int = 1) -> bytes:
    body, _ = healthy_page("coreweave", DAY)
    text = body.decode()
    assert old in text
    return text.replace(old, new, count).encode()


BAD_CELLS = [
    ("lambda", "<td>$6.69</td>", "<td>-$6.69</td>", "negative"),
    ("lambda", "<td>$6.69</td>", "<td>$-6.69</td>", "negative"),
    ("lambda", "<td>$6.69</td>", "<td>$6.69e3</td>", "less than 1000"),
    ("lambda", "<td>$6.69</td>", "<td>\u20ac6.69</td>", "EUR"),
    ("lambda", "<td>$6.69</td>", "<td>6.69 GBP</td>", "GBP"),
    ("lambda", "<td>$6.69</td>", "<td>42,00 \u20ac</td>", "EUR"),
    ("lambda", "<td>$6.69</td>", "<td>$6.69 per instance-month</td>", "month"),
    ("coreweave", "<td>$42.00</td>", "<td>($42.00)</td>", "negative"),
    ("coreweave", "<td>$42.00</td>", "<td>\u2212$42.00</td>", "negative"),
    ("coreweave", "<td>$42.00</td>", "<td>1e16</td>", "above"),
]


@pytest.mark.parametrize("provider, old, new, reason", BAD_CELLS)
def test_a_misread_price_is_quarantined_with_its_raw_text(provider, old, new, reason):
    with _Scenario("price_reader"):
        page = (_lambda_page if provider == "lambda" else _coreweave_page)(old, new)
        healthy = provider_parser(provider).parse(healthy_page(provider, DAY)[0])
        result = provider_parser(provider).parse(page)
        bad_value = new.removeprefix("<td>").removesuffix("</td>")
        hits = [r for r in result.report.rejected if bad_value in r.raw]
        assert hits, result.report.rejected
        assert reason.lower() in hits[0].reason.lower(), hits[0].reason
        # Exactly the bad row is lost: nothing of it lands under another value.
        assert len(result.offers) == len(healthy.offers) - 1


@pytest.mark.parametrize(
    "header",
    ["PRICE/GPU/MONTH* (EUR)", "PRICE/GPU/HR* (EUR)", "PRICE/GPU/MONTH*"],
)
def test_a_header_in_another_currency_or_per_month_rejects_the_whole_column(header):
    with _Scenario("price_header"):
        page = _lambda_page('<th scope="col">PRICE/GPU/HR*</th>', f'<th scope="col">{header}</th>', count=99)
        result = provider_parser("lambda").parse(page)
        assert result.offers == []  # the pipeline's has_priced_offers check fails the provider
        assert result.report.rejected and all(
            "EUR" in r.reason or "month" in r.reason for r in result.report.rejected
        )


def test_coreweave_price_per_month_is_not_read_as_per_hour():
    with _Scenario("price_header"):
        page = _coreweave_page("On-Demand Price / hr", "On-Demand Price / month")
        result = provider_parser("coreweave").parse(page)
        assert not [o for o in result.offers if o.tier == "on_demand"]
        assert any("month" in r.reason for r in result.report.rejected)


def test_a_struck_through_old_price_never_wins():
    with _Scenario("strike_through"):
        for markup in (
            "<s>$7.99</s> $6.69",
            "<del>$7.99</del>$6.69",
            '<span style="text-decoration: line-through">$7.99</span> $6.69',
        ):
            page = _lambda_page("<td>$6.69</td>", f"<td>{markup}</td>")
            prices = {o.usd_per_gpu_hour for o in provider_parser("lambda").parse(page).offers}
            assert 6.69 in prices and 7.99 not in prices, markup


def _runpod_page(field: str, value: object) -> bytes:
    body, _ = healthy_page("runpod", DAY)
    data = json.loads(body)
    first = data["data"]["gpuTypes"][0]
    assert field in first
    first[field] = value
    return json.dumps(data).encode()


@pytest.mark.parametrize("value, reason", [(-3.49, "negative"), (2.5e-05, "below"), (1e16, "above")])
def test_runpod_json_numbers_are_read_exactly(value, reason):
    with _Scenario("price_reader"):
        result = provider_parser("runpod").parse(_runpod_page("securePrice", value))
        hits = [r for r in result.report.rejected if "securePrice" in r.raw and repr(value) in r.raw]
        assert hits and reason in hits[0].reason, result.report.rejected


def test_a_negative_gpu_count_is_rejected_not_made_positive():
    with _Scenario("gpu_count"):
        body, _ = healthy_page("coreweave", DAY)
        text = body.decode()
        # The first data row's GPU count cell (the first <td> after the header) becomes -8.
        head, sep, rest = text.partition("<td>8</td>")
        assert sep
        result = provider_parser("coreweave").parse((head + "<td>-8</td>" + rest).encode())
        assert any("-8" in r.reason for r in result.report.rejected), result.report.rejected
        assert all(o.gpu_count >= 1 for o in result.offers)


def test_unknown_gpu_prices_get_the_plausibility_check():
    from gpuprice.pipelines.defs.scraping.checks import check_prices_plausible
    from gpuprice.scrapers.offer import ParseReport, ParseResult

    with _Scenario("plausibility"):
        offer = make_offer(
            gpu="unknown", gpu_raw="Mystery X1", usd_per_gpu_hour=999.0, usd_per_instance_hour=None
        )
        ok, message = check_prices_plausible(
            ParseResult(offers=[offer], report=ParseReport(provider="lambda")), None
        )
        assert not ok and "Mystery X1" in message


def test_spot_above_on_demand_is_flagged():
    from gpuprice.scrapers.offer_sink import spot_above_on_demand

    with _Scenario("spot_above_on_demand"):
        base = dict(usd_per_instance_hour=None, sku="a")
        notes = spot_above_on_demand(
            [make_offer(**base, usd_per_gpu_hour=2.0), make_offer(**base, tier="spot", usd_per_gpu_hour=3.0)]
        )
        assert notes and "spot above on-demand" in notes[0]


@pytest.mark.parametrize("raw", ["NVIDIA A100X", "B200A"])
def test_unknown_variants_are_not_guessed(raw):
    from gpuprice.scrapers.gpu_names import normalize_gpu

    with _Scenario("gpu_names"):
        assert normalize_gpu(raw) == "unknown"


# ---------------------------------------------------------------------------------------------
# F6: a symlink loop in an archive folder
# ---------------------------------------------------------------------------------------------


def test_a_symlink_loop_in_the_archive_is_skipped(tmp_path: Path):
    from gpuprice.scrapers.archive import find_archived_page

    with _Scenario("archive_symlink_loop"):
        archive = tmp_path / "archive"
        shutil.copytree(SAMPLE_ARCHIVE / "lambda", archive / "lambda")
        (archive / "lambda" / "2026-01-01.html").symlink_to("2026-01-01.html")
        (archive / "lambda" / "loop-a").symlink_to("loop-b")
        (archive / "lambda" / "loop-b").symlink_to("loop-a")
        for day in ("2026-01-02", DAY):
            page = find_archived_page(archive, "lambda", day)
            assert page is not None and page.path.name != "2026-01-01.html"


# ---------------------------------------------------------------------------------------------
# F1, F8, F10, F12: gpuprice sql
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def published(home: Path) -> Path:
    from gpuprice.settings import Settings
    from gpuprice.warehouse.connection import connect_writer
    from gpuprice.warehouse.publish import publish_analytics_copy
    from gpuprice.warehouse.writes import replace_snapshot_partition

    settings = Settings.from_env()
    con = connect_writer(settings.warehouse_path)
    replace_snapshot_partition(
        con,
        provider="lambda",
        snapshot_date=D1,
        source="archive",
        raw_sha256=None,
        parser_version=None,
        offers=[
            make_offer(),
            make_offer(sku="b", gpu_raw="H100 \x1b[2J\x07\u202eevil", usd_per_gpu_hour=5.4325),
        ],
    )
    publish_analytics_copy(con, settings.warehouse_path, settings.analytics_path)
    con.close()
    for folder in ("raw", "exports", "reports"):
        (home / folder).mkdir(exist_ok=True)
        (home / folder / "keep.txt").write_text(f"{folder} must survive\n")
    return home


def _fingerprint(home: Path) -> dict[str, str]:
    return {
        str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(home.rglob("*"))
        if p.is_file() and ".tmp" not in p.parts
    }


ESCAPES = [
    "EXPLAIN ANALYZE COPY (SELECT 'destroyed' AS a) TO '{home}/warehouse.duckdb' (FORMAT csv)",
    "EXPLAIN ANALYZE COPY (SELECT 'destroyed' AS a) TO '{home}/analytics.duckdb' (FORMAT csv)",
    "EXPLAIN ANALYZE COPY (SELECT 1 AS p) TO '{home}/raw' (FORMAT parquet, PARTITION_BY (p), OVERWRITE true)",
    "EXPLAIN ANALYZE COPY (SELECT 1 AS p) TO '{home}/exports' (FORMAT parquet, PARTITION_BY (p), OVERWRITE true)",
    "EXPLAIN ANALYZE COPY (SELECT 1 AS p) TO '{home}/reports' (FORMAT parquet, PARTITION_BY (p), OVERWRITE true)",
    "EXPLAIN COPY (SELECT 1) TO '{home}/x.csv'",
    "COPY (SELECT 1) TO '{home}/exports/x.csv'",
    "ATTACH '{home}/warehouse.duckdb' AS w",
    "PRAGMA memory_limit='1TB'",
    "PRAGMA force_checkpoint",
    "SET memory_limit = '1TB'",
    "INSTALL httpfs",
    "LOAD httpfs",
    "CALL checkpoint()",
    "SELECT * FROM checkpoint()",
    "SELECT * FROM query('SELECT 1')",
    "SELECT 1; SELECT 2",
    "EXPORT DATABASE '{home}/exports'",
    "SELECT * FROM read_text('{home}/warehouse.duckdb')",
]


@pytest.mark.parametrize("statement", ESCAPES)
def test_sql_cannot_write_or_escape_and_nothing_changes(published: Path, statement: str):
    with _Scenario("sql_guard"):
        before = _fingerprint(published)
        result = gpuprice("sql", statement.format(home=published))
        one_line_error(result, 2)
        assert "allowed" in result.err or "refused" in result.err, result.err
        after = _fingerprint(published)
        TALLY.rows(len(before), len(set(before.items()) & set(after.items())))
        assert after == before


def test_explain_of_a_select_still_works(published: Path):
    with _Scenario("sql_guard"):
        result = gpuprice("sql", "EXPLAIN SELECT count(*) FROM analytics.latest_prices")
        assert result.code == 0, result


def test_sql_times_out_with_one_line(published: Path):
    with _Scenario("sql_timeout"), environment({"GPUPRICE_SQL_TIMEOUT": "1"}):
        result = gpuprice("sql", "SELECT count(*) FROM range(1000000000000) a")
        one_line_error(result, 2, "stopped after", "GPUPRICE_SQL_TIMEOUT")


def test_sql_row_cap_with_one_line(published: Path):
    with _Scenario("sql_row_cap"):
        result = gpuprice("sql", "SELECT * FROM range(10000000)", "--format", "csv")
        one_line_error(result, 2, "more than", "rows")
        assert result.out == ""


def test_sql_json_serialises_blobs_uuids_and_non_finite(published: Path):
    with _Scenario("sql_json"):
        result = gpuprice(
            "sql",
            "SELECT '\\x00'::blob AS b, uuid() AS u, 'nan'::double AS n, 'inf'::double AS i",
            "--format",
            "json",
        )
        assert result.code == 0, result
        row = json.loads(result.out)[0]  # strict: json.loads would accept NaN, so check the text too
        assert "NaN" not in result.out and "Infinity" not in result.out
        assert row["b"] == "00" and len(row["u"]) == 36 and row["n"] is None and row["i"] is None


def test_sql_table_escapes_terminal_controls(published: Path):
    with _Scenario("terminal_controls"):
        result = gpuprice("sql", "SELECT gpu_raw FROM analytics.latest_prices ORDER BY gpu_raw")
        assert result.code == 0, result
        assert "\x1b" not in result.out and "\x07" not in result.out and "\u202e" not in result.out
        assert "\\x1b" in result.out and "\\u202e" in result.out


def test_sql_csv_defuses_formulas(published: Path):
    with _Scenario("csv_formula"):
        result = gpuprice("sql", "SELECT '=HYPERLINK(1)' AS a, '@SUM(1)' AS b, -1.5 AS c", "--format", "csv")
        assert result.code == 0, result
        assert result.out.splitlines()[1] == "'=HYPERLINK(1),'@SUM(1),-1.5"


# ---------------------------------------------------------------------------------------------
# F2, F10 and the lower list: one line instead of a hang or a traceback
# ---------------------------------------------------------------------------------------------


def test_a_warehouse_that_is_not_duckdb_is_one_line_not_a_hang(tmp_path: Path):
    with _Scenario("not_duckdb"):
        home = tmp_path / "home"
        home.mkdir()
        (home / "warehouse.duckdb").write_bytes(b"this is not a database\n" * 10)
        with environment({"GPUPRICE_HOME": str(home), "GPUPRICE_ARCHIVE": None}):
            result = gpuprice("run", "--date", DAY, "--source", "archive", "--no-reports")
        one_line_error(result, 2, "warehouse.duckdb", "not a DuckDB")
        assert (home / "warehouse.duckdb").read_bytes() == b"this is not a database\n" * 10


def _deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


CONFIG_FILES = {
    "deep": '{"a": ' + _deep_json(3000) + "}",
    "nan": '{"hidden_size": NaN, "num_attention_heads": 32, "vocab_size": 32000, "num_hidden_layers": 2}',
    "infinity": '{"hidden_size": Infinity, "num_attention_heads": 32, "vocab_size": 32000}',
    "bigint": '{"hidden_size": ' + "9" * 5000 + ', "num_attention_heads": 32, "vocab_size": 32000}',
    "duplicate": '{"hidden_size": 4096, "hidden_size": 8, "num_attention_heads": 32, "vocab_size": 32000}',
}


@pytest.mark.parametrize("name", sorted(CONFIG_FILES))
def test_fit_config_is_read_bounded(tmp_path: Path, name: str):
    with _Scenario("bounded_json"):
        path = tmp_path / f"{name}.json"
        path.write_text(CONFIG_FILES[name])
        result = gpuprice("fit", "--config", str(path), "--method", "full", "--gpu", "h100-sxm")
        one_line_error(result, 2, path.name)


WORKLOAD_FILES = {
    "deep": "workloads:\n  - " + "[" * 5000 + "]" * 5000 + "\n",
    "yes": "workloads:\n  - name: a\n    params_b: 7\n    method: full\n    tokens: yes\n",
    "true": "workloads:\n  - name: a\n    params_b: true\n    method: full\n    tokens: 1e9\n",
    "duplicate": "workloads:\n  - name: a\n    name: b\n    params_b: 7\n    method: full\n    tokens: 1e9\n",
}


@pytest.mark.parametrize("name", sorted(WORKLOAD_FILES))
def test_workloads_yaml_is_read_bounded_and_strict(tmp_path: Path, name: str):
    from gpuprice.errors import BadInput
    from gpuprice.models.workloads import load_file

    with _Scenario("bounded_yaml"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(WORKLOAD_FILES[name])
        with pytest.raises(BadInput) as caught:
            load_file(path)
        assert "\n" not in str(caught.value) and path.name in str(caught.value)


def test_parse_runpod_deep_json_is_one_line(tmp_path: Path):
    with _Scenario("bounded_json"):
        path = tmp_path / "deep.json"
        path.write_text('{"data": ' + _deep_json(3000) + "}")
        result = gpuprice("parse", "runpod", str(path))
        one_line_error(result, 3, "json")


def test_empty_gpuprice_home_means_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from gpuprice.settings import Settings

    with _Scenario("empty_home"):
        monkeypatch.chdir(tmp_path)
        with environment({"GPUPRICE_HOME": ""}):
            assert Settings.from_env().home == (tmp_path / "data").resolve()


@pytest.mark.parametrize(
    "argv, words",
    [
        (("estimate", *MODEL, "--gpu", "h100-sxm", "--tokens", "1e30"), ("--tokens",)),
        (("estimate", *MODEL, "--gpu", "h100-sxm", "--hours", "1e30"), ("--hours",)),
        (
            ("estimate", *MODEL, "--gpu", "h100-sxm", "--hours", "5", "--usd-per-gpu-hour", "1e30"),
            ("--usd-per-gpu-hour",),
        ),
        (("plan", "--params-b", "1e-309"), ("--params-b",)),
    ],
)
def test_magnitudes_are_bounded(argv, words):
    with _Scenario("magnitudes"):
        one_line_error(gpuprice(*argv), 2, *words)


def test_json_and_html_for_one_date_is_a_documented_choice_named_in_the_report(tmp_path: Path):
    from gpuprice.scrapers.collect_archive import collect_archived

    with _Scenario("archive_twins"):
        archive = tmp_path / "archive"
        shutil.copytree(SAMPLE_ARCHIVE / "runpod", archive / "runpod")
        shutil.copy(archive / "runpod" / "2026-07-16.html", archive / "runpod" / f"{DAY}.html")
        page = collect_archived("runpod", DAY, home=tmp_path / "home", archive_dir=archive)
        assert page.kind == "json"
        assert page.notes and f"{DAY}.json" in page.notes[0] and f"{DAY}.html" in page.notes[0]


def test_rank_on_a_date_without_data_says_why(published: Path):
    with _Scenario("rank_no_data"):
        result = gpuprice(
            "rank", "--workload", "llama-3.1-8b-lora", "--date", "2025-05-01", "--format", "json"
        )
        assert result.code == 0 and json.loads(result.out) == []
        assert "on or before 2025-05-01" in result.err


def test_a_published_copy_that_is_not_duckdb_is_one_line(published: Path):
    with _Scenario("not_duckdb"):
        (published / "analytics.duckdb").write_bytes(b"garbage" * 100)
        for argv in (("sql", "SELECT 1"), ("rank", "--workload", "llama-3.1-8b-lora")):
            one_line_error(gpuprice(*argv), 2, "analytics.duckdb", "not a DuckDB")


def test_report_on_an_unwritable_home_is_one_line(published: Path):
    with _Scenario("unwritable_home"):
        shutil.rmtree(published / "reports")
        (published / "reports").write_text("a file where the reports folder should be\n")
        result = gpuprice("report")
        one_line_error(result, 2, "reports")
        assert (published / "reports").read_text() == "a file where the reports folder should be\n"


def test_parse_never_prints_terminal_controls_from_a_page(tmp_path: Path):
    with _Scenario("terminal_controls"):
        page = _lambda_page(
            "<td>On-demand 8x NVIDIA B200 SXM6</td>", "<td>On-demand 8x Mystery\x1b]0;pwned\x07 \u202eX</td>"
        )
        path = tmp_path / "lambda.html"
        path.write_bytes(page)
        result = gpuprice("parse", "lambda", str(path), "--report")
        assert result.code == 0, result
        for stream in (result.out, result.err):
            assert "\x1b" not in stream and "\x07" not in stream and "\u202e" not in stream
        assert "\\x1b" in result.err  # named, escaped
