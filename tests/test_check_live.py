"""gpuprice check-live against pages served from 127.0.0.1 (GPUPRICE_LIVE_BASE_URL), never the internet."""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gpuprice.cli import main
from gpuprice.scrapers.live_check import live_requests
from gpuprice.scrapers.registry import parse_page
from gpuprice.warehouse import writes
from gpuprice.warehouse.connection import connect_writer
from parser_support import fixture_dir

PAGES = {
    "/crusoe/cloud/pricing": (
        200,
        (fixture_dir("crusoe") / "drift" / "unlabeled_on_demand.html").read_bytes(),
    ),
    "/nebius/prices": (200, (fixture_dir("nebius") / "drift" / "app_router.html").read_bytes()),
    # A bot wall instead of the prices; the fallback page /lambda/instances is a 404.
    "/lambda/pricing": (200, (fixture_dir("lambda") / "captcha.html").read_bytes()),
    # Another provider's pricing page where CoreWeave's should be (a redirect gone wrong, a mirror).
    "/coreweave/pricing": (200, (fixture_dir("crusoe") / "cards.html").read_bytes()),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status, body = PAGES.get(self.path, (404, b"not found"))
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def home(tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUPRICE_HOME", str(tmp_path))
    monkeypatch.setenv("GPUPRICE_LIVE_BASE_URL", server)
    return tmp_path


def _store_yesterdays_crusoe_snapshot(home: Path) -> None:
    """Yesterday's snapshot: H100 on-demand was $4.10, the MI300X card did not exist, an A40 did."""
    offers = parse_page("crusoe", PAGES["/crusoe/cloud/pricing"][1]).offers
    old = []
    for offer in offers:
        if offer.gpu == "mi300x":
            continue
        if offer.gpu == "h100-sxm" and offer.tier == "on_demand":
            offer = offer.model_copy(update={"usd_per_gpu_hour": 4.1})
        old.append(offer)
    old.append(
        offers[0].model_copy(update={"gpu": "a40", "gpu_raw": "NVIDIA A40 48GB", "sku": "NVIDIA A40 48GB"})
    )
    con = connect_writer(home / "warehouse.duckdb")
    try:
        writes.replace_snapshot_partition(
            con,
            provider="crusoe",
            snapshot_date=dt.date(2026, 10, 5),
            offers=old,
            source="scrape",
            raw_sha256=None,
            parser_version="crusoe/1",
        )
    finally:
        con.close()


def test_requests_are_repointed_at_the_base_url_keeping_path_and_query() -> None:
    moved = live_requests("runpod", "http://127.0.0.1:9/")
    assert [r.url for r in moved] == [
        "http://127.0.0.1:9/runpod/graphql",
        "http://127.0.0.1:9/runpod/pricing",
    ]
    assert [r.method for r in moved] == ["POST", "GET"]


def test_check_live_prints_status_bytes_strategy_offers_and_the_snapshot_difference(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _store_yesterdays_crusoe_snapshot(home)
    assert main(["check-live", "--providers", "crusoe,nebius"]) == 0
    out = capsys.readouterr().out.splitlines()
    crusoe_bytes = len(PAGES["/crusoe/cloud/pricing"][1])
    nebius_bytes = len(PAGES["/nebius/prices"][1])
    assert out == [
        f"crusoe         ok      HTTP 200  {crusoe_bytes:,} bytes  structured  9 offers  0 rejected  unknown GPUs: none",
        # What showed the page is Crusoe's, how many listings it had and how many GPUs were mapped.
        "  identity: brand name x2  coverage: 6 listings seen, 9 of 9 offers with a known GPU, 0 unknown names",
        "  vs snapshot 2026-10-05: 1 new, 1 gone, 1 changed",
        "    new:     AMD MI300X 192GB on_demand",
        "    gone:    NVIDIA A40 48GB on_demand",
        "    changed: NVIDIA H100 80GB HGX on_demand $4.1000 -> $3.9000",
        f"nebius         ok      HTTP 200  {nebius_bytes:,} bytes  structured  10 offers  0 rejected  unknown GPUs: none",
        "  identity: brand name x2  coverage: 4 listings seen, 10 of 10 offers with a known GPU, 0 unknown names",
        "  vs stored snapshot: none yet",
    ]
    # The raw pages were stored before parsing.
    stored = sorted(p.name for p in (home / "raw").rglob("*.gz"))
    assert len(stored) == 2, stored


def test_a_provider_that_cannot_be_parsed_fails_the_check_with_exit_1(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["check-live", "--providers", "lambda,crusoe", "--json"])
    assert exit_info.value.code == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["provider"], r["ok"], r["strategy"]) for r in lines] == [
        ("lambda", False, None),
        ("crusoe", True, "structured"),
    ]
    assert lines[0]["error"].startswith("parse failed: lambda: no price structure found: ")
    assert (lines[1]["identity"], lines[1]["listings_seen"], lines[1]["gpus_mapped"]) == (
        "brand name x2",
        6,
        9,
    )
    assert lines[1]["offers"] == 9 and lines[1]["diff"] == {
        "snapshot_date": None,
        "new": [],
        "gone": [],
        "changed": [],
    }


def test_an_unknown_provider_exits_2_naming_it(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["check-live", "--providers", "crusoe,paperspace"])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert "paperspace" in captured.err and captured.out == ""  # nothing fetched


def test_another_providers_page_fails_the_identity_check_with_no_offers(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["check-live", "--providers", "coreweave", "--json"])
    assert exit_info.value.code == 1
    (line,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (line["ok"], line["offers"], line["identity"]) == (False, 0, None)
    assert line["error"].startswith("parse failed: coreweave: page does not look like coreweave's pricing: ")
    assert len(list((home / "raw").rglob("*.gz"))) == 1  # the page is kept all the same
