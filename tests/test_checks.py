"""The blocking per-provider data checks and the baseline they compare against."""

from __future__ import annotations

import datetime as dt

import pytest

from conftest import make_offer
from gpuprice.pipelines.defs.scraping import checks
from gpuprice.pipelines.resources import WarehouseResource
from gpuprice.scrapers.offer import ParseReport, ParseResult
from gpuprice.warehouse.writes import record_provider_run


def result(offers) -> ParseResult:
    return ParseResult(offers=offers, report=ParseReport(provider="lambda", offers=len(offers)))


def test_each_check_passes_on_a_healthy_page():
    page = result(
        [make_offer(), make_offer(sku="b", gpu="a100-80gb-sxm", gpu_raw="A100", usd_per_gpu_hour=1.29)]
    )
    for name, (fn, _) in checks.CHECKS.items():
        assert fn(page, 2)[0], name


@pytest.mark.parametrize(
    "offers, check",
    [
        ([], "has_priced_offers"),
        ([make_offer(usd_per_gpu_hour=299.0)], "prices_plausible"),  # cents read as dollars
        ([make_offer(usd_per_gpu_hour=0.001)], "prices_plausible"),
        ([make_offer(), make_offer()], "unique_offer_keys"),
        (
            [
                make_offer(gpu="unknown", gpu_raw="X1"),
                make_offer(sku="b", gpu="unknown", gpu_raw="X2"),
                make_offer(sku="c"),
            ],
            "few_unknown_gpus",
        ),
    ],
)
def test_each_check_fails_on_its_fault(offers, check):
    passed, detail = checks.CHECKS[check][0](result(offers), None)
    assert not passed and detail


def test_sudden_drop_against_the_baseline():
    fn = checks.CHECKS["no_sudden_drop"][0]
    five = result([make_offer(sku=str(i)) for i in range(5)])
    assert fn(five, 10)[0] and not fn(five, 11)[0]
    assert fn(five, None)[0]


@pytest.fixture
def warehouse(tmp_path):
    return WarehouseResource.for_home(tmp_path)


def _run(warehouse, day, status, offers, parsed=None):
    with warehouse.open() as con:
        report = ParseReport(provider="crusoe", offers=parsed if parsed is not None else offers)
        record_provider_run(
            con,
            provider="crusoe",
            snapshot_date=day,
            source="archive",
            status=status,
            offers=offers if status == "success" else 0,
            report=report,
            error=None,
            started_at=dt.datetime.now(dt.UTC),
        )


def test_baseline_is_the_newest_recent_success(warehouse):
    day = dt.date(2026, 9, 10)
    assert checks.baseline_offer_count(warehouse, "crusoe", day, 6) is None
    _run(warehouse, dt.date(2026, 8, 1), "success", 15)  # too old to compare with
    assert checks.baseline_offer_count(warehouse, "crusoe", day, 6) is None
    _run(warehouse, dt.date(2026, 9, 8), "success", 15)
    assert checks.baseline_offer_count(warehouse, "crusoe", day, 6) == 15


def test_a_drop_seen_twice_in_a_row_is_accepted(warehouse):
    _run(warehouse, dt.date(2026, 9, 8), "success", 15)
    _run(warehouse, dt.date(2026, 9, 9), "failed", 0, parsed=6)  # blocked yesterday with 6 offers
    assert checks.baseline_offer_count(warehouse, "crusoe", dt.date(2026, 9, 10), 6) is None
    # A different count today is not a confirmation.
    assert checks.baseline_offer_count(warehouse, "crusoe", dt.date(2026, 9, 10), 3) == 15
