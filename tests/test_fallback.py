"""The generic fallback extractor: when it runs, what it may conclude, and where its output shows."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuprice.scrapers.fallback_reader import NO_GPU_REASON
from gpuprice.scrapers.offer import Offer, ParseReport, RejectedRow, StructureMissing
from gpuprice.scrapers.registry import parse_page
from gpuprice.warehouse import writes
from gpuprice.warehouse.connection import connect_writer

PRICES_WITHOUT_NAMES = (
    b"<html><body><p>Our prices</p><p>From $2.49/GPU-hr</p><p>Spot $1.10/GPU-hr</p></body></html>"
)
NO_PRICES = b"<html><body><h1>Sign in</h1><form><input name=email></form></body></html>"
CARD_LIST = (
    b'<html><head><link rel="canonical" href="https://lambda.ai/pricing"></head>'
    b"<body><ul><li><b>8x NVIDIA H100 SXM</b> $23.92/hr</li>"
    b"<li><b>1x NVIDIA A10</b> &ndash; $0.75 / GPU-hr</li><li>Storage $0.10/GB-month</li></ul></body></html>"
)


def test_prices_without_gpu_names_are_quarantined_never_offers() -> None:
    with pytest.raises(StructureMissing) as info:
        parse_page("crusoe", PRICES_WITHOUT_NAMES)
    assert info.value.what == "no GPU card with a labelled price (on-demand/spot/reserved)"
    report = info.value.report
    assert report is not None and report.parse_strategy == "fallback" and report.offers == 0
    assert [(r.raw, r.reason) for r in report.rejected] == [
        ("From $2.49/GPU-hr", NO_GPU_REASON),
        ("Spot $1.10/GPU-hr", NO_GPU_REASON),
    ]


def test_a_page_without_prices_keeps_the_structured_readers_reason() -> None:
    with pytest.raises(StructureMissing) as info:
        parse_page("lambda", NO_PRICES)
    assert (
        info.value.what
        == "no instance table with Plan and PRICE columns (login/captcha page or layout change)"
    )
    assert info.value.report is not None and info.value.report.rejected == []


def test_instance_prices_need_a_count_and_other_units_are_skipped() -> None:
    result = parse_page("lambda", CARD_LIST)
    assert result.report.parse_strategy == "fallback"
    assert [(o.gpu, o.gpu_count, o.usd_per_gpu_hour, o.usd_per_instance_hour) for o in result.offers] == [
        ("h100-sxm", 8, 2.99, 23.92),  # "$23.92/hr" for an 8x instance: per instance
        ("a10", 1, 0.75, None),  # "/ GPU-hr": per GPU
    ]
    assert result.report.rejected == []  # the storage price is in another unit, not a GPU price


def test_an_unlabelled_price_is_never_given_a_tier_the_provider_does_not_document() -> None:
    page = b"<html><body><div><h3>NVIDIA HGX H100</h3><p>$2.95/GPU-hr</p></div></body></html>"
    # Nebius shows preemptible and on-demand side by side: an unlabelled price is neither.
    with pytest.raises(StructureMissing) as info:
        parse_page("nebius", page)
    assert [r.reason for r in info.value.report.rejected] == [
        "fallback: price without an on-demand/spot/reserved label"
    ]
    # Crusoe documents the first price of a card as on-demand.
    crusoe_page = page.replace(b"<body>", b"<body><p>Crusoe Cloud</p>")
    assert [(o.tier, o.usd_per_gpu_hour) for o in parse_page("crusoe", crusoe_page).offers] == [
        ("on_demand", 2.95)
    ]


def _run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuprice", *args],
        capture_output=True,
        text=True,
        env={"GPUPRICE_HOME": str(home), "PATH": "/usr/bin:/bin"},
        check=False,
    )


def test_gpuprice_parse_says_fallback_and_exits_3_with_one_line_when_nothing_is_found(tmp_path: Path) -> None:
    cards = tmp_path / "cards.html"
    cards.write_bytes(CARD_LIST)
    done = _run_cli("parse", "lambda", str(cards), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [o["gpu"] for o in json.loads(done.stdout)] == ["h100-sxm", "a10"]
    assert done.stderr.strip() == "lambda: 2 offers, 0 unpriced, 0 rejected, read by the fallback extractor"

    blank = tmp_path / "prices.html"
    blank.write_bytes(PRICES_WITHOUT_NAMES)
    done = _run_cli("parse", "crusoe", str(blank), home=tmp_path)
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "gpuprice: crusoe: no price structure found: no GPU card with a labelled price (on-demand/spot/reserved)"
    ]


def test_provider_runs_and_freshness_show_the_strategy_and_rejected_rows(tmp_path: Path) -> None:
    con = connect_writer(tmp_path / "warehouse.duckdb")
    try:
        offer = Offer(
            provider="lambda", gpu="a10", gpu_raw="NVIDIA A10", gpu_count=1, usd_per_gpu_hour=0.75, sku="A10"
        )
        report = ParseReport(
            provider="lambda", parse_strategy="fallback", rejected=[RejectedRow(raw="$9 | x", reason="bad")]
        )
        writes.replace_snapshot_partition(
            con,
            provider="lambda",
            snapshot_date=dt.date(2026, 10, 6),
            offers=[offer],
            source="scrape",
            raw_sha256=None,
            parser_version="lambda/1",
            report=report,
        )
        quarantine = ParseReport(
            provider="crusoe",
            parse_strategy="fallback",
            rejected=[RejectedRow(raw="$2.49/GPU-hr", reason=NO_GPU_REASON)],
        )
        writes.record_provider_run(
            con,
            provider="crusoe",
            snapshot_date=dt.date(2026, 10, 6),
            source="live",
            status="failed",
            offers=0,
            report=quarantine,
            error="parse failed",
            started_at=dt.datetime(2026, 10, 6, tzinfo=dt.UTC),
        )
        assert con.execute(
            "SELECT provider, parse_strategy, rejected FROM analytics.provider_freshness ORDER BY provider"
        ).fetchall() == [("crusoe", "fallback", 1), ("lambda", "fallback", 1)]
        assert con.execute(
            "SELECT provider, raw_row, reason, source FROM quarantine ORDER BY provider"
        ).fetchall() == [
            ("crusoe", "$2.49/GPU-hr", NO_GPU_REASON, "scrape"),
            ("lambda", "$9 | x", "bad", "scrape"),
        ]
    finally:
        con.close()
