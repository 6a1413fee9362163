"""Reliability round 3 (issue 37): each failure of the third independent attack, reproduced and held.

Every reproduction must end in a one-line error with the contract's exit code, a quarantined row
with its reason, or the right value, and none may lose or change stored data. The counts go to
reliability.json (section ``round3``): scenarios tried and clean, and rows checked/lost.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import D1, make_offer
from faults.runs import RunResult, environment, gpuprice
from faults.tally import Tally

TALLY = Tally("round3")


@pytest.fixture(scope="module", autouse=True)
def _write_tally() -> Iterator[None]:
    yield
    TALLY.notes["scenarios"] = TALLY.inputs_tried
    TALLY.notes["scenarios_clean"] = TALLY.inputs_clean
    TALLY.write()


class Scenario:
    """Counts one scenario as tried, and as clean only when the block finishes."""

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


def one_line_error(result: RunResult, code: int = 2, *words: str) -> str:
    assert result.code == code, result
    assert "Traceback" not in result.err, result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1, result.err
    for word in words:
        assert word.lower() in lines[0].lower(), lines[0]
    return lines[0]


def fingerprint(home: Path) -> dict[str, str]:
    """sha256 of every file under ``home`` (to show nothing changed)."""
    return {
        str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(home.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


# ---------------------------------------------------------------------------------------------
# 1. gpuprice sql: allowed folders, nesting, bytes, time, control characters
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
            make_offer(sku="b", gpu_raw="H100 \x1b[2J\x07\u202eevil", usd_per_gpu_hour=5.4),
        ],
    )
    publish_analytics_copy(con, settings.warehouse_path, settings.analytics_path)
    con.close()
    (home / "exports").mkdir(exist_ok=True)
    return home


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "passwd").write_text("root:x:0:0:secret-marker\n")
    return folder


@pytest.mark.parametrize("where", ["working folder", "home as working folder"])
def test_sql_reads_nothing_through_a_tmp_symlink(
    published: Path, secret: Path, where: str, monkeypatch: pytest.MonkeyPatch
):
    """DuckDB's default temp folder is the relative `.tmp`, which it adds to the allowed folders."""
    with Scenario("sql_symlink_tmp"):
        work = published if where.startswith("home") else published.parent / "work"
        work.mkdir(exist_ok=True)
        (work / ".tmp").symlink_to(secret, target_is_directory=True)
        monkeypatch.chdir(work)
        for path in (".tmp/passwd", f"{work}/.tmp/passwd", f"{published}/.tmp/passwd"):
            result = gpuprice("sql", f"select content from read_text('{path}')")
            one_line_error(result, 2, "refused")
            assert "secret-marker" not in result.out + result.err


def test_sql_allowed_folders_are_absolute_and_inside_home(published: Path, monkeypatch: pytest.MonkeyPatch):
    with Scenario("sql_allowed_folders"):
        monkeypatch.chdir(published.parent)
        result = gpuprice("sql", "select current_setting('allowed_directories') AS a", "--format", "json")
        assert result.code == 0, result
        folders = json.loads(result.out)[0]["a"]
        assert folders, result.out
        for folder in folders:
            assert os.path.isabs(folder), folders
            assert Path(folder).resolve().is_relative_to(published.resolve()), folders


def test_sql_a_symlink_inside_exports_opens_nothing(published: Path, secret: Path):
    with Scenario("sql_symlink_exports"):
        (published / "exports" / "evil").symlink_to(secret, target_is_directory=True)
        result = gpuprice("sql", f"select content from read_text('{published}/exports/evil/passwd')")
        one_line_error(result, 2, "refused")
        assert "secret-marker" not in result.out


@pytest.mark.parametrize(
    "expression",
    [
        "select " + "1+" * 500 + "1",
        "select " + "abs(" * 500 + "1" + ")" * 500,
        "select * from " + "(select * from " * 300 + "range(1)" + ")" * 300,
    ],
    ids=["500 additions", "500 calls", "300 subqueries"],
)
def test_sql_deep_expression_is_one_line(published: Path, expression: str):
    with Scenario("sql_depth"):
        one_line_error(gpuprice("sql", expression), 2, "levels deep")


def test_sql_byte_cap(published: Path):
    with Scenario("sql_bytes"), environment({"GPUPRICE_SQL_MAX_BYTES": "1000000"}):
        result = gpuprice("sql", "select repeat('x', 2000000) AS x", "--format", "csv")
        one_line_error(result, 2, "more than", "MB", "GPUPRICE_SQL_MAX_BYTES")
        assert result.out == ""
        result = gpuprice("sql", "select repeat('x', 100) AS x from range(20000)", "--format", "json")
        one_line_error(result, 2, "more than", "MB")


@pytest.mark.slow
def test_sql_one_huge_value_is_refused_before_it_is_built(published: Path):
    """`repeat('x', 500000000)`: before, DuckDB built the 500 MB string and it was copied out
    (2.1 GB peak, 23.6 s) before the byte cap refused it; now the memory limit refuses the
    allocation: one line, exit 2, the process's peak well under that."""
    import subprocess
    import sys

    measured = published / "peak_rss_kb"
    program = (
        "import os, resource, sys\n"
        "from gpuprice.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "finally:\n"
        "    with open(os.environ['PEAK_RSS_FILE'], 'w') as f:\n"
        "        f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
    )
    with Scenario("sql_memory"):
        env = {**os.environ, "GPUPRICE_HOME": str(published), "PEAK_RSS_FILE": str(measured)}
        proc = subprocess.Popen(
            [sys.executable, "-c", program, "sql", "select repeat('x', 500000000) AS x"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            out, err = proc.communicate(timeout=300)
        finally:
            proc.kill()
        one_line_error(RunResult(proc.returncode, out.decode(), err.decode()), 2, "memory")
        assert out == b""
        peak_mb = int(measured.read_text()) / 1024
        assert peak_mb < 1500, peak_mb  # 2,080 MB before; about 1,100 MB now


def test_sql_data_segment_bound_refuses_an_allocation_and_is_restored():
    import resource

    from gpuprice.warehouse.sqlguard import bounded_data_segment

    before = resource.getrlimit(resource.RLIMIT_DATA)
    with pytest.raises(MemoryError), bounded_data_segment(64 << 20):
        bytearray(256 << 20)
    assert resource.getrlimit(resource.RLIMIT_DATA) == before
    with bounded_data_segment(64 << 20):
        block = bytearray(16 << 20)  # within the headroom
    assert len(block) == 16 << 20 and resource.getrlimit(resource.RLIMIT_DATA) == before


def test_sql_time_limit_covers_rendering(published: Path, monkeypatch: pytest.MonkeyPatch):
    """The query returns at once; writing its rows out takes longer than the limit."""
    import time

    from gpuprice.commands import output

    real = output.csv_cell

    def slow_cell(value: object) -> object:
        time.sleep(0.001)
        return real(value)

    with Scenario("sql_output_time"), environment({"GPUPRICE_SQL_TIMEOUT": "1"}):
        monkeypatch.setattr(output, "csv_cell", slow_cell)
        started = time.monotonic()
        result = gpuprice("sql", "select range AS x from range(10000)", "--format", "csv")
        one_line_error(result, 2, "stopped after 1 s", "output included")
        assert time.monotonic() - started < 5


def test_sql_time_limit_covers_a_blocked_write(published: Path):
    """A reader that never reads: the write blocks once the pipe is full; the limit still ends it."""
    import subprocess
    import sys

    with Scenario("sql_output_time"):
        env = {**os.environ, "GPUPRICE_HOME": str(published), "GPUPRICE_SQL_TIMEOUT": "2"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpuprice", "sql", "select repeat('x', 100) AS x from range(100000)"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            code = proc.wait(timeout=30)  # nothing reads stdout: the 64 KB pipe fills at once
        finally:
            proc.kill()
        err = proc.stderr.read().decode() if proc.stderr else ""
        one_line_error(RunResult(code, "", err), 2, "stopped after 2 s", "output included")


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_sql_control_characters_escaped_in_every_format(published: Path, fmt: str):
    with Scenario("sql_control_chars"):
        result = gpuprice(
            "sql",
            "select gpu_raw, 'a' || chr(0) || chr(13) || 'b' AS t from analytics.latest_prices",
            "--format",
            fmt,
        )
        assert result.code == 0, result
        raw = result.out.replace("\n", "")
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c == "\u202e" for c in raw), repr(
            result.out
        )
        assert "evil" in result.out


# ---------------------------------------------------------------------------------------------
# 4. A held lock: at most GPUPRICE_LOCK_TIMEOUT, then one line naming the holder, exit 2
# ---------------------------------------------------------------------------------------------

_HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("HOLDING", flush=True)
time.sleep(120)
"""


@pytest.fixture
def held_warehouse(published: Path) -> Iterator[tuple[Path, int]]:
    """The warehouse held open for writing by another process (killed after the test)."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(published / "warehouse.duckdb")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "HOLDING"
        yield published, proc.pid
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--date", "2026-10-06", "--providers", "lambda,runpod", "--no-reports"),
        ("backfill", "--from", "2026-10-05", "--to", "2026-10-06", "--providers", "lambda"),
        ("import-observations", "{observations}"),
    ],
    ids=["run", "backfill", "import-observations"],
)
def test_a_held_warehouse_fails_a_writer_after_the_timeout(held_warehouse: tuple[Path, int], args: tuple):
    import time

    from conftest import OBSERVED_PRICES

    home, pid = held_warehouse
    before = fingerprint(home)
    with Scenario("lock_timeout"), environment({"GPUPRICE_LOCK_TIMEOUT": "1"}):
        started = time.monotonic()
        result = gpuprice(*(a.format(observations=OBSERVED_PRICES) for a in args))
        waited = time.monotonic() - started
        line = one_line_error(result, 2, "locked", f"PID {pid}", "waited 1 s", "GPUPRICE_LOCK_TIMEOUT")
        assert waited < 10, (waited, line)
        assert " ok " not in result.out, result.out  # nothing reported as landed
        after = fingerprint(home)
        TALLY.rows(len(before), len(set(before.items()) & set(after.items())))
        assert after == before


_RELEASING_HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("HOLDING", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ("run", "--date", "2026-10-06", "--providers", "lambda", "--no-reports"),
        ("backfill", "--from", "2026-10-05", "--to", "2026-10-06", "--providers", "lambda"),
    ],
    ids=["run", "backfill"],
)
def test_a_lock_taken_mid_run_is_one_line_and_exit_2(published: Path, args: tuple) -> None:
    """Another process takes the warehouse after the run started (between its steps, before the
    rankings): one line naming the holder and what landed, exit 2, no provider "ok" on stdout,
    within the wait (not one wait per step left), also when the holder lets go before the run ends."""
    import subprocess
    import sys
    import threading
    import time

    repo = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPRICE_")}
    env.update(
        GPUPRICE_HOME=str(published),
        GPUPRICE_LOCK_TIMEOUT="2",
        GPUPRICE_TEST_PAUSE_IN="workload_rankings",
        PYTHONPATH=os.pathsep.join([str(repo), str(repo / "tests")]),
    )
    run = subprocess.Popen(
        [sys.executable, "-m", "faults.pause_before_writer", *args],
        cwd=repo,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    guard = threading.Timer(600, run.kill)  # never hang the suite
    guard.start()
    holder = None
    try:
        with Scenario("lock_mid_run"):
            assert run.stdout is not None and run.stdin is not None
            paused = run.stdout.readline().strip()
            assert paused == "PAUSED", (paused, run.stderr.read() if run.poll() is not None else "")
            # A real second writer: holds the lock for 6 s (three waits), then lets go.
            holder = subprocess.Popen(
                [sys.executable, "-c", _RELEASING_HOLDER, str(published / "warehouse.duckdb"), "6"],
                stdout=subprocess.PIPE,
                text=True,
            )
            assert holder.stdout is not None and holder.stdout.readline().strip() == "HOLDING"
            started = time.monotonic()
            run.stdin.write("go\n")
            run.stdin.flush()
            out, err = run.communicate(timeout=600)
            waited = time.monotonic() - started
            result = RunResult(run.returncode, out, err)
            assert "Traceback" not in err, err
            errors = [line for line in err.splitlines() if line.startswith("gpuprice:")]
            assert len(errors) == 1 and err.strip().splitlines()[-1] == errors[0], err
            line = errors[0]
            assert result.code == 2, result
            for word in (
                "locked",
                f"PID {holder.pid}",
                "waited 2 s",
                "GPUPRICE_LOCK_TIMEOUT",
                "daily_models",
            ):
                assert word in line, line
            assert " ok " not in out, out  # nothing reported as landed
            assert waited < 30, (waited, line)  # one wait (and the other steps' single tries)
    finally:
        guard.cancel()
        for proc in (run, holder):
            if proc is not None and proc.poll() is None:
                proc.kill()
            if proc is not None:
                proc.communicate()


def test_lock_timeout_setting_is_checked():
    with Scenario("lock_timeout"), environment({"GPUPRICE_LOCK_TIMEOUT": "soon"}):
        one_line_error(gpuprice("workloads"), 2, "GPUPRICE_LOCK_TIMEOUT", "soon")


# ---------------------------------------------------------------------------------------------
# 2. Prices as numbers only (the shared price reader and the offer sink, on each provider's page)
# ---------------------------------------------------------------------------------------------

DAY = "2026-10-06"


def _page(provider: str, old: str, new: str) -> bytes:
    from faults.pages import healthy_page

    text = healthy_page(provider, DAY)[0].decode()
    assert old in text, (provider, old)
    return text.replace(old, new, 1).encode()


def _runpod_page(field: str, value: object) -> bytes:
    from faults.pages import healthy_page

    data = json.loads(healthy_page("runpod", DAY)[0])
    first = data["data"]["gpuTypes"][0]
    assert field in first
    first[field] = value
    return json.dumps(data).encode()


def _assert_quarantined(provider: str, page: bytes, marker: str, reason: str) -> None:
    from faults.pages import healthy_page
    from gpuprice.scrapers.registry import provider_parser

    healthy = provider_parser(provider).parse(healthy_page(provider, DAY)[0])
    result = provider_parser(provider).parse(page)
    hits = [r for r in result.report.rejected if marker in r.raw]
    assert hits, result.report.rejected
    assert reason.lower() in hits[0].reason.lower(), hits[0].reason
    # Exactly the bad row is lost: nothing of it lands under another value.
    assert len(result.offers) == len(healthy.offers) - 1
    healthy_keys = {o.key: o for o in healthy.offers}
    for offer in result.offers:
        assert healthy_keys[offer.key] == offer, offer


HOSTILE_CELLS = [
    ("lambda", "<td>$3.99</td>", "<td>$3.\x0099</td>", "$3.", "character U+"),
    ("lambda", "<td>$3.99</td>", "<td>$3.\u200b99</td>", "$3.", "character U+"),
    ("lambda", "<td>$3.99</td>", "<td>$ 3 . 9 9</td>", "$ 3 . 9 9", "not a price"),
    ("lambda", "<td>$3.99</td>", "<td>$3 .99</td>", "$3 .99", "not a price"),
    ("lambda", "<td>$3.99</td>", "<td>$0.001</td>", "$0.001", "below the floor"),
    (
        "lambda",
        "<td>On-demand 8x NVIDIA H100 SXM</td>",
        "<td>-8x NVIDIA H100 SXM</td>",
        "-8x",
        "negative GPU count",
    ),
    ("coreweave", "<td>$42.00</td>", "<td>$42.\x0000</td>", "$42.", "character U+"),
]


@pytest.mark.parametrize("provider, old, new, marker, reason", HOSTILE_CELLS)
def test_a_hostile_price_cell_is_quarantined_with_the_reason(provider, old, new, marker, reason):
    with Scenario("price_reader"):
        _assert_quarantined(provider, _page(provider, old, new), marker, reason)


@pytest.mark.parametrize(
    "value, reason",
    [({"a": 1}, "a dict"), ([3.99], "a list"), (0.001, "below the floor"), ("3.\u000099", "character U+")],
    ids=["object", "list", "below floor", "control character"],
)
def test_runpod_json_price_must_be_a_number(value, reason):
    with Scenario("price_reader"):
        marker = json.dumps(value)[:4] if not isinstance(value, float) else repr(value)
        page = _runpod_page("securePrice", value)
        from gpuprice.scrapers.registry import provider_parser

        result = provider_parser("runpod").parse(page)
        hits = [r for r in result.report.rejected if "securePrice" in r.raw and reason in r.reason]
        assert hits, (marker, result.report.rejected)
        assert all(o.usd_per_gpu_hour >= 0.01 for o in result.offers)


def _observations(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "obs.csv"
    path.write_text("provider,gpu,gpu_count,tier,usd_per_gpu_hour,observed_on\n" + "\n".join(rows) + "\n")
    return path


def test_an_import_below_the_floor_is_quarantined(home: Path, tmp_path: Path):
    with Scenario("import_floor"):
        path = _observations(
            tmp_path,
            "lambda,H100 SXM,1,on_demand,1e-9,2026-10-01",
            "lambda,H100 SXM,8,on_demand,2.99,2026-10-01",
        )
        result = gpuprice("import-observations", str(path))
        assert result.code == 0, result
        assert "1 added" in result.out and "1 quarantined" in result.out, result.out
        assert "below the floor" in result.err, result.err
        history = gpuprice(
            "sql", "select min(usd_per_gpu_hour) AS m from price_snapshots", "--format", "json"
        )
        assert json.loads(history.out)[0]["m"] == 2.99


def test_duplicate_natural_keys_in_one_import_are_quarantined(home: Path, tmp_path: Path):
    with Scenario("import_duplicates"):
        path = _observations(
            tmp_path,
            "lambda,H100 SXM,1,on_demand,2.99,2026-10-01",
            "lambda,H100 SXM,1,on_demand,1.00,2026-10-01",
            "lambda,H100 SXM,1,on_demand,5.00,2026-10-01",
        )
        result = gpuprice("import-observations", str(path))
        assert result.code == 0, result
        assert "1 added" in result.out and "2 quarantined" in result.out, result.out
        assert result.err.count("duplicate of row 2") == 2, result.err
        prices = gpuprice("sql", "select usd_per_gpu_hour AS p from price_snapshots", "--format", "json")
        assert [r["p"] for r in json.loads(prices.out)] == [2.99]


# ---------------------------------------------------------------------------------------------
# 3. Bounds on every input: HTML nesting and parse time, config/batch files, a huge CSV import
# ---------------------------------------------------------------------------------------------


def _nested(provider: str, levels: int) -> bytes:
    from faults.pages import healthy_page

    body = healthy_page(provider, DAY)[0].decode()
    at = body.index(">", body.index("<body")) + 1
    return (body[:at] + "<div>" * levels + "x" + "</div>" * levels + body[at:]).encode()


@pytest.mark.parametrize("provider", ["lambda", "coreweave", "nebius", "crusoe", "massedcompute"])
def test_deeply_nested_html_fails_fast(provider: str):
    import time

    from gpuprice.scrapers.offer import StructureMissing
    from gpuprice.scrapers.registry import parse_page

    with Scenario("html_depth"):
        page = _nested(provider, 20_000)
        started = time.monotonic()
        with pytest.raises(StructureMissing, match="nested 20,000 elements deep"):
            parse_page(provider, page)
        assert time.monotonic() - started < 3
        assert parse_page(provider, _nested(provider, 50)).offers  # a plausible nesting still parses


def test_a_page_of_too_many_tags_fails_fast():
    import time

    from gpuprice.scrapers.offer import StructureMissing
    from gpuprice.scrapers.registry import parse_page

    with Scenario("html_size"):
        page = ("<html><body>" + "<span>a</span>" * 300_000 + "</body></html>").encode()
        started = time.monotonic()
        with pytest.raises(StructureMissing, match="600,004 tags"):
            parse_page("lambda", page)
        assert time.monotonic() - started < 10


def test_a_parse_past_the_time_limit_fails_that_provider(monkeypatch: pytest.MonkeyPatch):
    import time

    from faults.pages import healthy_page
    from gpuprice.scrapers import bounds
    from gpuprice.scrapers.offer import StructureMissing
    from gpuprice.scrapers.providers import lambda_cloud
    from gpuprice.scrapers.registry import parse_page

    def stall(content: bytes, observed_on=None):
        time.sleep(30)

    with Scenario("parse_time"):
        monkeypatch.setattr(bounds, "PARSE_SECONDS_LIMIT", 0.5)
        monkeypatch.setattr(lambda_cloud, "parse", stall)
        started = time.monotonic()
        with pytest.raises(StructureMissing, match="more than 0.5 s to parse"):
            parse_page("lambda", healthy_page("lambda", DAY)[0])
        assert time.monotonic() - started < 5


def test_a_nested_page_fails_its_provider_in_a_run_and_the_others_land(home: Path, tmp_path: Path):
    import shutil

    from gpuprice.scrapers.archive import SAMPLE_ARCHIVE, find_archived_page

    with Scenario("html_depth_run"):
        archive = tmp_path / "archive"
        shutil.copytree(SAMPLE_ARCHIVE, archive)
        page = find_archived_page(archive, "lambda", DAY)
        assert page is not None and page.path.suffix == ".html"
        page.path.write_bytes(_nested("lambda", 20_000))
        with environment({"GPUPRICE_ARCHIVE": str(archive)}):
            result = gpuprice("run", "--date", DAY, "--providers", "lambda,coreweave,nebius", "--no-reports")
        assert result.code == 1, result
        lines = result.provider_lines()
        assert "FAILED" in lines["lambda"] and "nested 20,000 elements deep" in lines["lambda"], lines
        assert " ok " in lines["coreweave"] and " ok " in lines["nebius"], lines
        assert "Traceback" not in result.err


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("option", ["--config", "--batch"])
@pytest.mark.parametrize("source", ["/dev/zero", "fifo", "folder", "oversized"])
def test_config_and_batch_files_are_bounded(option: str, source: str, fifo: Path, tmp_path: Path):
    import time

    from gpuprice.errors import MAX_INPUT_BYTES

    path = {"/dev/zero": Path("/dev/zero"), "fifo": fifo, "folder": tmp_path}.get(source)
    if path is None:
        path = tmp_path / "big.json"
        with path.open("wb") as handle:
            handle.truncate(MAX_INPUT_BYTES + 1)  # sparse: no disk used
    args = ["fit", option, str(path)] + (
        ["--method", "full", "--gpu", "h100-sxm"] if option == "--config" else []
    )
    with Scenario("input_file_bounds"):
        started = time.monotonic()
        result = gpuprice(*args)
        one_line_error(result, 2, str(path))
        assert time.monotonic() - started < 5


def test_workloads_file_is_bounded():
    with Scenario("input_file_bounds"), environment({"GPUPRICE_WORKLOADS": "/dev/zero"}):
        one_line_error(gpuprice("workloads"), 2, "/dev/zero", "not a regular file")


@pytest.mark.parametrize("rows, words", [(970_000, ("MB",)), (100_001, ("more than 100,000 rows",))])
def test_a_huge_observations_import_fails_with_one_line(home: Path, tmp_path: Path, rows: int, words: tuple):
    import time

    with Scenario("import_size"):
        path = tmp_path / "huge.csv"
        line = "lambda,H100 SXM,1,on_demand,2.99,2026-10-01\n"
        path.write_text("provider,gpu,gpu_count,tier,usd_per_gpu_hour,observed_on\n" + line * rows)
        started = time.monotonic()
        result = gpuprice("import-observations", str(path))
        one_line_error(result, 2, *words)
        assert time.monotonic() - started < 20
        assert not (home / "warehouse.duckdb").exists()


# ---------------------------------------------------------------------------------------------
# 5. One line for every failure
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["1e308", "1e400", "3000000000"])
def test_an_overflowing_config_is_one_line(tmp_path: Path, value: str):
    path = tmp_path / "config.json"
    path.write_text(
        '{"model_type": "llama", "hidden_size": HIDDEN, "num_hidden_layers": 32, "num_attention_heads": 32,'
        ' "intermediate_size": 11008, "vocab_size": 32000}'.replace("HIDDEN", value)
    )
    with Scenario("config_overflow"):
        for command in (
            ("fit", "--config", str(path), "--method", "full", "--gpu", "h100-sxm"),
            (
                "estimate",
                "--config",
                str(path),
                "--method",
                "full",
                "--gpu",
                "h100-sxm",
                "--tokens",
                "1B",
                "--usd-per-gpu-hour",
                "2",
            ),
        ):
            one_line_error(gpuprice(*command), 2, "hidden size")


@pytest.mark.parametrize("week", ["9999-W52", "0001-W01", "9999-W53"])
def test_report_week_out_of_range_is_one_line(published: Path, week: str):
    with Scenario("report_week"):
        one_line_error(gpuprice("report", "--week", week), 2, week)


def test_a_bad_workloads_file_during_run_is_one_line(home: Path, tmp_path: Path):
    bad = tmp_path / "workloads.yaml"
    bad.write_text("workloads:\n  - name: [unclosed\n")
    with Scenario("run_workloads"), environment({"GPUPRICE_WORKLOADS": str(bad)}):
        for args in (
            ("run", "--date", DAY, "--providers", "lambda", "--no-reports"),
            ("backfill", "--from", DAY, "--to", DAY, "--providers", "lambda"),
        ):
            result = gpuprice(*args)
            one_line_error(result, 2, str(bad), "malformed YAML")
            assert " ok " not in result.out


def _mount(*args: str) -> bool:
    import subprocess

    if os.geteuid() != 0:
        return False
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _umount(path: Path) -> None:
    import subprocess

    subprocess.run(["umount", str(path)], capture_output=True)


@pytest.fixture
def read_only_home(published: Path, tmp_path: Path) -> Iterator[Path]:
    """The seeded home, read-only: a read-only bind mount as root, else a folder without write permission."""
    view = tmp_path / "ro-home"
    view.mkdir()
    if _mount("--bind", str(published), str(view)):
        if not _mount("-o", "remount,bind,ro", str(view)):
            _umount(view)
            pytest.skip("cannot remount read-only")
        try:
            yield view
        finally:
            _umount(view)
        return
    if os.geteuid() == 0:
        pytest.skip("root without mount: no way to make a folder read-only")
    published.chmod(0o555)
    try:
        yield published
    finally:
        published.chmod(0o755)


def test_import_observations_on_a_read_only_home_is_one_line(read_only_home: Path):
    from conftest import OBSERVED_PRICES

    with Scenario("read_only_home"), environment({"GPUPRICE_HOME": str(read_only_home)}):
        before = fingerprint(read_only_home)
        result = gpuprice("import-observations", str(OBSERVED_PRICES))
        one_line_error(result, 2, str(read_only_home), "not writable")
        assert fingerprint(read_only_home) == before


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """A home on a 6 MB filesystem: a real tmpfs where the machine allows mounting one (root),
    else a simulated one (the free space reported as 6 MB less what is used)."""
    import shutil

    folder = tmp_path / "small"
    folder.mkdir()
    if _mount("-t", "tmpfs", "-o", "size=6m", "tmpfs", str(folder)):
        try:
            yield folder / "home", "tmpfs"
        finally:
            _umount(folder)
        return
    from gpuprice import disk

    real = shutil.disk_usage

    def six_mb(path):
        usage = real(path)
        used = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        return usage._replace(total=6_000_000, free=max(0, 6_000_000 - used))

    monkeypatch.setattr(disk.shutil, "disk_usage", six_mb)
    yield folder / "home", "simulated"


def test_a_full_disk_is_one_line_before_anything_is_written(small_disk: tuple[Path, str], tmp_path: Path):
    from conftest import OBSERVED_PRICES

    home, how = small_disk
    TALLY.notes["full_disk"] = how
    with Scenario("full_disk"), environment({"GPUPRICE_HOME": str(home), "GPUPRICE_ARCHIVE": None}):
        for args in (
            ("run", "--date", DAY, "--no-reports"),
            ("backfill", "--from", DAY, "--to", DAY, "--providers", "lambda"),
            ("import-observations", str(OBSERVED_PRICES)),
        ):
            result = gpuprice(*args)
            one_line_error(result, 2, f"no space left on {home}", "MB needed")
            assert " ok " not in result.out
        assert not (home / "warehouse.duckdb").exists()


def test_a_disk_that_fills_during_a_write_is_one_line(published: Path, monkeypatch: pytest.MonkeyPatch):
    """Space runs out after the check (another process filled the disk): simulated ENOSPC, from
    the operating system and in DuckDB's words."""
    import errno

    import duckdb

    from conftest import OBSERVED_PRICES
    from gpuprice.warehouse import publish

    failures = [
        OSError(errno.ENOSPC, "No space left on device", str(published / "analytics.duckdb")),
        duckdb.IOException('IO Error: Could not write file "x.wal": No space left on device'),
    ]
    for failure in failures:

        def full(*args, failure=failure, **kwargs):
            raise failure

        with Scenario("full_disk_during_write"):
            monkeypatch.setattr(publish, "publish_analytics_copy", full)
            result = gpuprice("import-observations", str(OBSERVED_PRICES))
            one_line_error(result, 2, "no space left on")


def _private_mount_namespace() -> list[str] | None:
    """A command prefix that runs a program in its own mount namespace, where it may mount a
    small tmpfs: unprivileged through a user namespace, or as root; None where neither works."""
    import shutil
    import subprocess

    if shutil.which("unshare") is None:
        return None
    for prefix in (["unshare", "--user", "--map-root-user", "--mount"], ["unshare", "--mount"]):
        probe = subprocess.run(
            [*prefix, "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"], capture_output=True
        )
        if probe.returncode == 0:
            return prefix
    return None


@pytest.mark.slow
@pytest.mark.parametrize(
    "step, leave",
    [("dim_gpu", 0), ("workload_rankings", 2_000_000)],
    ids=["full-before-the-first-step", "nearly-full-before-the-rankings"],
)
def test_a_disk_that_fills_mid_run_is_one_line(tmp_path: Path, step: str, leave: int):
    """A real 80 MB filesystem (tmpfs in a private mount namespace) that fills after the run's
    space check: before, Dagster's SQLite event storage failed with a 109-line traceback ("disk
    I/O error"), or the run listed each failed step and exited 1; now one line, exit 2, naming the
    home, the space needed and free, and what landed."""
    import subprocess
    import sys

    prefix = _private_mount_namespace()
    if prefix is None:
        pytest.skip("no private mount namespace here (unshare and tmpfs need user namespaces or root)")
    repo = Path(__file__).resolve().parents[1]
    disk = tmp_path / "disk"
    disk.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPRICE_")}
    env.update(
        GPUPRICE_HOME=str(disk / "home"),
        GPUPRICE_TEST_PAUSE_IN=step,
        GPUPRICE_TEST_FILL=str(disk),
        GPUPRICE_TEST_FILL_LEAVE=str(leave),
        PYTHONPATH=os.pathsep.join([str(repo), str(repo / "tests")]),
    )
    mount_then_run = 'mount -t tmpfs -o size=80m tmpfs "$1" && shift && exec "$@"'
    command = [sys.executable, "-m", "faults.pause_before_writer", "run", "--date", DAY, "--providers"]
    with Scenario("full_disk_mid_run"):
        done = subprocess.run(
            [*prefix, "sh", "-c", mount_then_run, "sh", str(disk), *command, "lambda,runpod", "--no-reports"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        errors = [line for line in done.stderr.splitlines() if line.startswith("gpuprice:")]
        assert len(errors) == 1 and done.stderr.strip().splitlines()[-1] == errors[0], done.stderr[-3000:]
        assert done.returncode == 2, (done.returncode, done.stdout, done.stderr[-2000:])
        for words in (f"no space left on {disk / 'home'}", "MB needed", "MB free"):
            assert words in errors[0], errors[0]
        assert " ok " not in done.stdout, done.stdout


# ---------------------------------------------------------------------------------------------
# 7. DuckLake catalogs other than a DuckDB file: extensions from installed packages, never downloaded
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "catalog, package",
    [
        ("sqlite:{home}/catalog.sqlite", "duckdb-extension-sqlite-scanner"),
        ("mysql:db=x host=127.0.0.1", "duckdb-extension-mysql-scanner"),
    ],
    ids=["sqlite", "mysql"],
)
def test_a_catalog_without_its_installed_client_is_one_line_and_no_download(
    home: Path, catalog: str, package: str
):
    import time

    from gpuprice.warehouse import lake

    engine = "ducklake:" + catalog.format(home=home)
    with Scenario("ducklake_offline"), environment({"GPUPRICE_WAREHOUSE": engine}):
        started = time.monotonic()
        try:
            result = gpuprice("run", "--date", DAY, "--providers", "lambda", "--no-reports")
        finally:
            lake.select(None)
        one_line_error(result, 2, package, "GPUPRICE_WAREHOUSE")
        assert time.monotonic() - started < 30  # the download attempt took 80-130 s offline
        assert " ok " not in result.out


def test_a_lake_connection_never_installs_or_autoloads(home: Path):
    from gpuprice.warehouse import lake

    with Scenario("ducklake_offline"):
        target = lake.LakeTarget(catalog=str(home / "catalog.ducklake"), data_path=str(home / "lake"))
        con = lake.connect_lake(target)
        try:
            settings = dict(
                con.execute(
                    "SELECT name, value FROM duckdb_settings() WHERE name IN"
                    " ('autoinstall_known_extensions', 'autoload_known_extensions')"
                ).fetchall()
            )
        finally:
            con.close()
        assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}


# ---------------------------------------------------------------------------------------------
# 6. Cleanup and leaks: stale temp copies, credentials in URLs
# ---------------------------------------------------------------------------------------------


def test_a_publish_removes_temp_copies_of_killed_runs(published: Path):
    from conftest import OBSERVED_PRICES

    with Scenario("stale_temp_files"):
        stale = [published / f".analytics-{name}.duckdb.tmp" for name in ("k1ll3d", "x9y8z7")]
        for path in stale:
            path.write_bytes(b"\0" * 4096)
        keep = published / "notes.tmp"
        keep.write_text("not ours")
        result = gpuprice("import-observations", str(OBSERVED_PRICES))  # publishes the copy
        assert result.code == 0, result
        assert not any(path.exists() for path in stale)
        assert keep.exists() and (published / "analytics.duckdb").is_file()
        assert not list(published.glob(".analytics-*.duckdb.tmp"))


def test_a_lake_publish_keeps_a_young_temp_copy(tmp_path: Path):
    import time

    from gpuprice.warehouse.publish import STALE_TEMP_SECONDS, remove_stale_copies

    with Scenario("stale_temp_files"):
        young, old = tmp_path / ".analytics-young.duckdb.tmp", tmp_path / ".analytics-old.duckdb.tmp"
        young.write_bytes(b"x")
        old.write_bytes(b"x")
        past = time.time() - STALE_TEMP_SECONDS - 60
        os.utime(old, (past, past))
        assert remove_stale_copies(tmp_path, holding_writer=False) == [old]
        assert young.exists()


@pytest.fixture
def not_found_server() -> Iterator[str]:
    """A 127.0.0.1 server answering 404 to every request."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class NotFound(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("fmt", [(), ("--json",)], ids=["table", "json"])
def test_check_live_never_echoes_credentials(home: Path, not_found_server: str, fmt: tuple):
    with Scenario("credentials_redacted"):
        url = not_found_server.replace("http://", "http://user:s3cretpw@")
        with environment({"GPUPRICE_LIVE_BASE_URL": url}):
            result = gpuprice("check-live", "--providers", "lambda,runpod", *fmt)
        assert result.code != 0, result
        assert "s3cretpw" not in result.out + result.err, result
        stored = "".join(p.read_text(errors="replace") for p in home.rglob("*.json"))
        assert "s3cretpw" not in stored


def test_redact_credentials():
    from gpuprice.scrapers.redact import redact_credentials

    assert redact_credentials("see http://u:p@h:8/x?q and https://tok@h2/") == (
        "see http://[redacted]@h:8/x?q and https://[redacted]@h2/"
    )
    assert redact_credentials("mail me@example.com, http://h/a@b") == "mail me@example.com, http://h/a@b"


@pytest.mark.parametrize("keep", ["0", "7"])
def test_a_lake_expires_old_snapshots_and_their_files(home: Path, keep: str):
    """Each rerun of a date wrote new Parquet files and kept every old one (49 per rerun)."""
    import duckdb

    from gpuprice.warehouse import lake

    engine = f"ducklake:{home / 'catalog.ducklake'}"

    def files() -> int:
        return sum(1 for _ in (home / "lake").rglob("*.parquet"))

    def snapshots() -> int:
        con = duckdb.connect(str(home / "catalog.ducklake"), read_only=True)
        try:
            return int(con.execute("SELECT count(*) FROM ducklake_snapshot").fetchone()[0])
        finally:
            con.close()

    with (
        Scenario("ducklake_expiry"),
        environment({"GPUPRICE_WAREHOUSE": engine, "GPUPRICE_LAKE_SNAPSHOT_DAYS": keep}),
    ):
        try:
            counts = []
            for _ in range(3):
                result = gpuprice("run", "--date", DAY, "--providers", "lambda", "--no-reports")
                assert result.code == 0, result
                counts.append((files(), snapshots()))
            rows = gpuprice("sql", "select count(*) AS n from analytics.latest_prices", "--format", "json")
        finally:
            lake.select(None)
            lake.set_snapshot_retention(7)
        assert json.loads(rows.out)[0]["n"] > 0, rows
        if keep == "0":  # only the newest snapshot: files and snapshots stop growing
            assert counts[2][0] == counts[1][0], counts
            assert counts[2][1] <= counts[1][1], counts
        else:  # a week of time travel: nothing is old enough yet
            assert counts[2][0] > counts[1][0], counts
