"""Security: scraped text is escaped in every report, user and scraped values never become SQL,
hostile names never become paths outside their folders, and an API key never lands anywhere.

The end-to-end runs use a GPUPRICE_HOME whose path itself is hostile (a quote, a space and
markup: ``o'brien <home>``), since a home folder is user input too.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import logging
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import httpx
import pytest

from faults.pages import CAPTCHA_PAGE, healthy_page
from faults.runs import environment, gpuprice
from faults.tables import table_fingerprint
from faults.tally import Tally
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE

TALLY = Tally("security")
DAY = dt.date(2026, 10, 6)

# Scraped GPU names a hostile (or compromised) pricing page could carry.
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(2)>"
ATTRIBUTE = '" onmouseover="alert(3)'
SQL = "A100'); DROP TABLE price_snapshots; --"
HOSTILE_NAMES = (f"H100 SXM {SCRIPT}", IMG, f"H200 {ATTRIBUTE}", SQL)
SCRIPT_BLOCK = re.compile(r"<script\b[^>]*>(.*?)</script\s*>", re.I | re.S)


@pytest.fixture(scope="module", autouse=True)
def _write_tally() -> Iterator[None]:
    yield
    TALLY.write()


@pytest.fixture(scope="module")
def hostile_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A full run (with reports) of DAY whose Runpod page names GPUs with markup and SQL."""
    root = tmp_path_factory.mktemp("security")
    archive = root / "archive"
    shutil.copytree(SAMPLE_ARCHIVE, archive)
    page = archive / "runpod" / f"{DAY.isoformat()}.json"
    data = json.loads(page.read_bytes())
    for gpu_type, name in zip(data["data"]["gpuTypes"], HOSTILE_NAMES):
        gpu_type["displayName"] = name
    page.write_text(json.dumps(data), encoding="utf-8")

    home = root / "o'brien <home>"
    with environment({"GPUPRICE_HOME": str(home), "GPUPRICE_ARCHIVE": str(archive)}):
        run = gpuprice("run", "--date", DAY.isoformat(), "--no-reports")  # `report` renders them below
        report = gpuprice("report")
    assert "Traceback" not in run.err + report.err
    lines = run.provider_lines()
    assert " ok " in lines["runpod"], run.out  # the hostile names are data, not a reason to fail
    assert report.code == 0, report
    return home


# ---------------------------------------------------------------------------------------------
# Reports escape scraped text
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_scraped_markup_never_appears_unescaped_in_any_report_file(hostile_home: Path):
    files = [p for p in (hostile_home / "reports").rglob("*") if p.is_file()]
    assert any(p.suffix == ".html" for p in files)
    TALLY.fault("markup_in_scraped_gpu_names", len(HOSTILE_NAMES) - 1)
    texts = {p: p.read_text(encoding="utf-8", errors="replace") for p in files}
    for path, text in texts.items():
        assert SCRIPT not in text, path
        assert IMG not in text, path
        if path.suffix in (".html", ".svg"):
            assert ATTRIBUTE not in text, path
            # The pages may carry scripts of their own; none may hold scraped text.
            assert not any("alert(" in block for block in SCRIPT_BLOCK.findall(text)), path
    # The names did reach the reports (escaped), so the check above really looked at them: the
    # cheapest-per-GPU table names the listing an offer was mapped from when it differs.
    escaped = ("&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(2)&gt;")
    shown = {name for name in escaped if any(name in t for t in texts.values())}
    assert shown, "no hostile name reached any report, so the escaping was not exercised"


@pytest.mark.slow
def test_scraped_sql_lands_as_a_value(hostile_home: Path):
    con = duckdb.connect(str(hostile_home / "warehouse.duckdb"), read_only=True)
    try:
        names = {
            r[0]
            for r in con.execute(
                "SELECT gpu_raw FROM price_snapshots WHERE provider = 'runpod' AND snapshot_date = ?", [DAY]
            ).fetchall()
        }
        tables = con.execute("SELECT count(*) FROM price_snapshots").fetchone()[0]
    finally:
        con.close()
    assert SQL in names and IMG in names
    assert tables > 0


# ---------------------------------------------------------------------------------------------
# SQL: user values are values
# ---------------------------------------------------------------------------------------------

INJECTIONS = [
    (("rank", "--workload", "x' OR '1'='1"), "x' OR '1'='1"),
    (("rank", "--workload", "llama-3.1-8b-lora'; DROP TABLE price_snapshots; --"), "DROP TABLE"),
    (("rank", "--workload", "llama-3.1-8b-lora", "--date", "2026-10-06' OR '1'='1"), "2026-10-06' OR '1'='1"),
    (("report", "--workload", "x' OR 1=1 --"), "x' OR 1=1 --"),
    (("report", "--week", "2026-W41'; DROP TABLE raw_pages; --"), "DROP TABLE raw_pages"),
    (("run", "--providers", "lambda'; DROP TABLE raw_pages; --", "--no-reports"), "DROP TABLE raw_pages"),
    (("run", "--date", "2026-10-06'; DELETE FROM price_snapshots; --"), "DELETE FROM"),
    (("parse", "lambda' OR 1=1 --", "README.md"), "lambda' OR 1=1 --"),
    (("sql", "SELECT 1; DROP TABLE price_snapshots"), "read-only"),
    (
        ("sql", "SELECT * FROM price_snapshots WHERE provider = '' OR 1=1; DELETE FROM price_snapshots"),
        "read-only",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("argv, echoed", INJECTIONS, ids=[" ".join(a)[:60] for a, _ in INJECTIONS])
def test_sql_in_arguments_is_treated_as_a_value(hostile_home: Path, argv, echoed: str):
    before = table_fingerprint(hostile_home / "warehouse.duckdb")
    published = table_fingerprint(hostile_home / "analytics.duckdb")
    with environment({"GPUPRICE_HOME": str(hostile_home), "GPUPRICE_ARCHIVE": None}):
        result = gpuprice(*argv)
    TALLY.fault("sql_in_arguments")
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert result.code == 2 and len(lines) == 1 and "Traceback" not in result.err, result
    assert echoed.lower() in lines[0].lower()  # named back as the bad value, not run
    assert table_fingerprint(hostile_home / "warehouse.duckdb") == before
    assert table_fingerprint(hostile_home / "analytics.duckdb") == published


# ---------------------------------------------------------------------------------------------
# Paths: hostile names never leave their folder
# ---------------------------------------------------------------------------------------------

HOSTILE_PROVIDERS = ["../lambda", "/etc", "lambda/../../x", "..", "", "LAMBDA", "lambda\x00", "lambda/"]
HOSTILE_DATES = [
    "../2026-10-06",
    "2026-10-06/../../x",
    "/2026-10-06",
    "2026-13-01",
    "20261006",
    "2026-10-06\n",
]


def _files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


@pytest.mark.parametrize("provider", HOSTILE_PROVIDERS)
def test_the_raw_store_refuses_hostile_provider_names(tmp_path: Path, provider: str):
    from gpuprice.scrapers.rawstore import RawStoreError, store_raw, validators_path

    home = tmp_path / "home"
    with pytest.raises(RawStoreError):
        store_raw(home, provider, DAY, "https://x.example/", b"<html></html>")
    with pytest.raises(RawStoreError):
        validators_path(home, provider)
    assert _files_under(tmp_path) <= {home} | _files_under(home)
    assert not list(tmp_path.rglob("*.gz"))
    TALLY.fault("hostile_path_value")


@pytest.mark.parametrize("day", HOSTILE_DATES)
def test_the_raw_store_refuses_hostile_dates(tmp_path: Path, day: str):
    from gpuprice.scrapers.rawstore import RawStoreError, store_raw

    with pytest.raises(RawStoreError):
        store_raw(tmp_path / "home", "lambda", day, "https://x.example/", b"<html></html>")
    assert not list(tmp_path.rglob("*.gz"))
    TALLY.fault("hostile_path_value")


@pytest.mark.parametrize(
    "sha, kind",
    [("../../../etc/passwd", "html"), ("A" * 64, "html"), ("a" * 64, "html/../../x"), ("a" * 64, "exe")],
)
def test_raw_page_paths_refuse_hostile_digests_and_kinds(tmp_path: Path, sha: str, kind: str):
    from gpuprice.scrapers.rawstore import RawStoreError, raw_page_path

    with pytest.raises(RawStoreError):
        raw_page_path(tmp_path, "lambda", DAY, sha, kind)
    TALLY.fault("hostile_path_value")


def test_the_raw_store_refuses_a_provider_folder_that_leads_outside(tmp_path: Path):
    from gpuprice.scrapers.rawstore import RawStoreError, store_raw

    home, outside = tmp_path / "home", tmp_path / "outside"
    (home / "raw").mkdir(parents=True)
    outside.mkdir()
    (home / "raw" / "lambda").symlink_to(outside, target_is_directory=True)
    with pytest.raises(RawStoreError, match="outside the raw store"):
        store_raw(home, "lambda", DAY, "https://x.example/", b"<html></html>")
    assert list(outside.rglob("*")) == []
    TALLY.fault("symlink_escape")


def test_the_archive_reads_only_well_named_pages_inside_it(tmp_path: Path):
    from gpuprice.scrapers.archive import find_archived_page
    from gpuprice.scrapers.rawstore import RawStoreError

    archive, outside = tmp_path / "archive", tmp_path / "outside"
    (archive / "lambda").mkdir(parents=True)
    outside.mkdir()
    secret = outside / "2026-10-05.html"
    secret.write_text("<html>not for the archive</html>")
    good = archive / "lambda" / "2026-10-01.html"
    good.write_text("<html>lambda</html>")
    (archive / "lambda" / "2026-10-05.html").symlink_to(secret)  # a page leading outside
    for name in (
        "..2026-10-04.html",
        "2026-10-04.html.exe",
        "2026-10-04.HTML",
        "2026-02-30.html",
        " 2026-10-04.html",
    ):
        (archive / "lambda" / name).write_text("<html>ignored</html>")
    (archive / "nebius").symlink_to(outside, target_is_directory=True)  # a provider folder leading outside

    page = find_archived_page(archive, "lambda", DAY)
    assert page is not None and page.path == good
    assert find_archived_page(archive, "nebius", DAY) is None
    for provider in ("../outside", "/etc", ".."):
        with pytest.raises(RawStoreError):
            find_archived_page(archive, provider, DAY)
    with pytest.raises(RawStoreError):
        find_archived_page(archive, "lambda", "../../2026-10-06")
    TALLY.fault("symlink_escape", 2)
    TALLY.fault("hostile_path_value", 9)


@pytest.mark.parametrize(
    "name",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "..",
        ".",
        "a/../../b",
        "index",
        "con\x00.html",
        "..\\..\\windows",
        " ",
    ],
)
def test_report_file_names_stay_inside_the_week_folder(tmp_path: Path, name: str):
    from gpuprice.reports.render import safe_filename

    stem = safe_filename(name)
    assert stem and "/" not in stem and "\\" not in stem and "\x00" not in stem and stem not in (".", "..")
    target = (tmp_path / "reports" / "2026-W41" / f"{stem}.html").resolve()
    assert target.parent == (tmp_path / "reports" / "2026-W41").resolve()
    TALLY.fault("hostile_path_value")


def test_a_workload_named_like_a_path_is_refused_with_file_and_line(tmp_path: Path):
    from gpuprice.errors import BadInput
    from gpuprice.models.workloads import load_file

    path = tmp_path / "workloads.yaml"
    path.write_text(
        "workloads:\n  - name: ../../pwned\n    model: meta-llama/Llama-3.1-8B\n    method: lora\n"
        "    tokens: 1e8\n    checkpoint_interval_tokens: 1e7\n"
    )
    with pytest.raises(BadInput) as caught:
        load_file(path)
    assert str(path) in str(caught.value) and "line 2" in str(caught.value) and "name" in str(caught.value)
    TALLY.fault("hostile_path_value")


# ---------------------------------------------------------------------------------------------
# Secrets
# ---------------------------------------------------------------------------------------------

SECRET = "sk-test-secret"


class SecretProbe:
    """Runpod's API (needs the key), a mirror on another host it redirects to, and the HTML page.

    First the API fails with a transport error whose text quotes our Authorization header (a
    proxy echoing it), then it redirects to another host, which fails; the HTML fallback is a
    captcha. Runpod fails with every message on the way written to logs, stderr and the warehouse.
    """

    def __init__(self) -> None:
        self.seen: list[httpx.Request] = []
        self.api_calls = 0
        self.lambda_page, _ = healthy_page("lambda")

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        host, path = request.url.host, request.url.path
        if path == "/robots.txt":
            return httpx.Response(404)
        if host == "api.runpod.io":
            self.api_calls += 1
            if self.api_calls == 1:
                raise httpx.ConnectError(
                    f"proxy refused: {request.headers.get('authorization')}", request=request
                )
            return httpx.Response(307, headers={"location": "https://graphql-mirror.runpod.example/graphql"})
        if host == "graphql-mirror.runpod.example":
            return httpx.Response(500, text="mirror down")
        if host == "www.runpod.io":
            return httpx.Response(200, content=CAPTCHA_PAGE)
        if host == "lambda.ai":
            return httpx.Response(200, content=self.lambda_page)
        raise httpx.ConnectError(f"no route to {host} (test network)", request=request)


@pytest.mark.slow
def test_an_api_key_never_lands_in_logs_metadata_or_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):

    from gpuprice.pipelines.instance import cli_instance
    from gpuprice.scrapers.fetch import PoliteFetcher

    probe = SecretProbe()

    def fetcher(*args, **kwargs):
        return PoliteFetcher(
            *args, **{"transport": httpx.MockTransport(probe), "sleep": lambda s: None, **kwargs}
        )

    monkeypatch.setattr("gpuprice.scrapers.collect.PoliteFetcher", fetcher)
    caplog.set_level(logging.DEBUG)
    home = tmp_path / "home"
    today = dt.datetime.now(dt.UTC).date()
    with environment(
        {"GPUPRICE_HOME": str(home), "GPUPRICE_ARCHIVE": None, "GPUPRICE_RUNPOD_API_KEY": SECRET}
    ):
        result = gpuprice(
            "run",
            "--date",
            today.isoformat(),
            "--source",
            "live",
            "--providers",
            "runpod,lambda",
            "--no-reports",
        )
    TALLY.fault("api_key_in_environment")

    # The key was used where it belongs, and only there.
    to_api = [r for r in probe.seen if r.url.host == "api.runpod.io" and r.url.path == "/graphql"]
    assert to_api and all(r.headers.get("authorization") == f"Bearer {SECRET}" for r in to_api)
    elsewhere = [r for r in probe.seen if r not in to_api]
    assert any(r.url.host == "graphql-mirror.runpod.example" for r in elsewhere)
    assert all(SECRET not in str(r.headers) and SECRET not in str(r.url) for r in elsewhere)
    lines = result.provider_lines()
    assert " FAILED " in lines["runpod"] and " ok " in lines["lambda"], result.out

    # Nowhere to be found: output, logs, Dagster's event log, the warehouse, any file under home.
    assert SECRET not in result.out and SECRET not in result.err
    assert SECRET not in caplog.text
    assert all(SECRET not in record.getMessage() for record in caplog.records)
    assert "proxy refused" in result.err + caplog.text  # the message that quoted the key was logged, redacted
    # The persistent instance the CLI recorded the runs in (what `make dev`'s UI shows).
    instances = [cli_instance(home)]
    for instance in instances:
        for run in instance.get_runs():
            for entry in instance.all_logs(run.run_id):
                assert SECRET not in repr(entry)
    assert instances[0].get_runs(), "the CLI recorded no runs to scan"
    instances[0].dispose()
    for table, rows in table_fingerprint(home / "warehouse.duckdb", exclude=frozenset()).items():
        assert SECRET not in repr(rows), table
    scanned = 0
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            assert SECRET.encode() not in data, path
            scanned += 1
    assert scanned >= 4  # warehouse, analytics copy, raw pages, validators index
    TALLY.notes["files_scanned_for_the_key"] = scanned
