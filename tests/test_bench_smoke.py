"""Smoke tests of the benchmarks (``make bench``): each runs on a tiny size and returns well-formed
figures; the measuring machinery measures what it claims. No timing is asserted anywhere."""

from __future__ import annotations

import datetime as dt
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from bench import end_to_end, parse_speed, run, sweep_speed, warehouse_scale
from bench.figures import Bound, Figure
from bench.synthetic_history import generate_history
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.scrapers.registry import provider_parser
from gpuprice.warehouse.connection import connect_writer


def assert_well_formed(figures: list[Figure], names: set[str]) -> None:
    assert {f.name for f in figures} == names
    for figure in figures:
        data = figure.model_dump(mode="json")
        for key in ("name", "value", "unit", "baseline", "baseline_value", "ratio", "target_text", "passed"):
            assert key in data
        assert math.isfinite(figure.value) and figure.value > 0
        assert math.isfinite(figure.ratio) and figure.ratio > 0
        assert figure.ratio == pytest.approx(figure.value / figure.baseline_value)
        assert figure.passed in ((None,) if not figure.target else (True, False))
        line = figure.line()
        assert "\n" not in line and figure.name in line
        json.dumps(data)  # results.json must be able to hold it


# ---------------------------------------------------------------- figures
def test_a_figure_passes_only_when_every_bound_holds() -> None:
    both = (Bound(on="value", op=">=", limit=1e6), Bound(on="ratio", op=">=", limit=50))
    assert Figure(
        name="x", value=2e6, unit="/s", baseline="b", baseline_value=1e4, ratio_meaning="m", target=both
    ).passed
    slow_ratio = Figure(
        name="x", value=2e6, unit="/s", baseline="b", baseline_value=1e5, ratio_meaning="m", target=both
    )
    assert slow_ratio.ratio == 20 and slow_ratio.passed is False
    assert (
        Figure(name="x", value=1, unit="s", baseline="b", baseline_value=1, ratio_meaning="m").passed is None
    )
    assert "ratio >= 50x" in slow_ratio.target_text and "FAIL" in slow_ratio.line()


# ---------------------------------------------------------------- 1. parse
def test_parse_benchmark_runs_all_three_ways_on_the_six_newest_pages() -> None:
    figures = parse_speed.measure(repeats=1)
    assert_well_formed(
        figures,
        {"parse.six_pages_seconds", "parse.pages_per_s_vs_html_parser", "parse.pages_per_s_vs_lxml_only"},
    )
    details = figures[0].details
    assert set(details["pages"]) == set(PROVIDERS)
    # The lxml-only baseline must really reach each page's price structure, or it measures nothing.
    assert all(count > 0 for count in details["lxml_only_items"].values()), details["lxml_only_items"]
    assert details["megabytes"] > 0


def test_html_parser_swap_is_used_inside_and_undone_after() -> None:
    module = provider_parser("lambda")
    original = module.BeautifulSoup
    with parse_speed.html_parser_everywhere([module]):
        soup = module.BeautifulSoup("<table><tr><td>x</td></tr></table>", "lxml")
        assert soup.builder.NAME == "html.parser"
    assert module.BeautifulSoup is original
    assert module.BeautifulSoup("<p>x</p>", "lxml").builder.NAME == "lxml"


# ---------------------------------------------------------------- 2. sweep
@pytest.fixture(scope="module")
def two_workloads():
    return sweep_speed.workload_variants()[:2]


def test_fifty_workload_variants_are_distinct_and_valid() -> None:
    variants = sweep_speed.workload_variants()
    assert len(variants) == 50
    assert len({v.name for v in variants}) == 50
    definitions = {
        json.dumps(v.model_dump(mode="json", exclude={"name", "description"}), sort_keys=True)
        for v in variants
    }
    assert len(definitions) == 50  # no two variants describe the same job


def test_sweep_benchmark_agrees_with_the_plain_loop(two_workloads) -> None:
    figures = sweep_speed.measure(repeats=1, loop_stride=40, workloads=two_workloads, throughput_rows=500)
    assert_well_formed(
        figures, {"sweep.configs_per_s", "sweep.memory_fit_configs_per_s", "sweep.throughput_rows_per_s"}
    )
    details = figures[0].details
    assert details["configurations"] == 2 * details["offers"] * len(sweep_speed.GPU_COUNTS) * 4
    assert details["ranked_rows"] > 0 and details["loop_configurations_run"] > 0
    assert all(d <= sweep_speed.RELATIVE_TOLERANCE for d in details["max_relative_difference"].values())


def test_a_wrong_number_from_either_path_is_caught(two_workloads) -> None:
    day, offers = sweep_speed.sample_day()
    offers = offers.head(6)
    sweep, ranking, _, _ = sweep_speed._timed_product(two_workloads, offers, day)
    memory_rows = sweep_speed._loop_memory(two_workloads, offers, [0, 5])
    cost_rows = sweep_speed._loop_costs(two_workloads, ranking, offers)
    sweep_speed.check_agreement(two_workloads, offers, sweep, ranking, memory_rows, cost_rows)

    bent = ranking.copy()
    bent.loc[0, "cost_per_checkpoint_usd"] *= 1.001
    with pytest.raises(sweep_speed.Disagreement, match="cost_per_checkpoint"):
        sweep_speed.check_agreement(two_workloads, offers, sweep, bent, memory_rows, cost_rows)
    flipped = [(*row[:5], not row[5]) if i == 3 else row for i, row in enumerate(memory_rows)]
    with pytest.raises(sweep_speed.Disagreement, match="fits"):
        sweep_speed.check_agreement(two_workloads, offers, sweep, ranking, flipped, cost_rows)


# ---------------------------------------------------------------- 3. warehouse
@pytest.mark.slow
def test_warehouse_benchmark_on_a_tiny_history(tmp_path: Path) -> None:
    figures = warehouse_scale.measure(
        repeats=1, short_days=3, long_days=9, offers_per_provider=8, workdir=tmp_path
    )
    assert_well_formed(
        figures,
        {
            "warehouse.latest_prices_ms",
            "warehouse.price_history_one_gpu_ms",
            "warehouse.cheapest_by_gpu_one_date_ms",
            "warehouse.append_one_day_ms",
            "warehouse.append_and_publish_one_day_s",
            "warehouse.peak_rss_mb",
        },
    )
    rows = figures[0].details["rows"]
    assert 0 < rows["short"] < rows["long"]
    # Same newest day at any history length: the two latest_prices answers are the same size.
    latest = figures[0].details["result_rows"]
    assert latest["short"] == latest["long"] > 0
    appended = {f.name: f for f in figures}["warehouse.append_one_day_ms"].details["offers_appended"]
    assert appended == latest["long"]
    assert list(tmp_path.iterdir()) == []  # the generated warehouses are removed


def test_synthetic_history_is_one_snapshot_per_provider_per_day(tmp_path: Path) -> None:
    con = connect_writer(tmp_path / "w.duckdb")
    added = generate_history(con, days=20, offers_per_provider=10, end=dt.date(2026, 1, 31))
    per_day = con.execute(
        "SELECT count(DISTINCT snapshot_date), count(DISTINCT provider), min(snapshot_date), max(snapshot_date),"
        " count(*) FROM price_snapshots"
    ).fetchall()[0]
    assert per_day == (20, len(PROVIDERS), dt.date(2026, 1, 12), dt.date(2026, 1, 31), added)
    duplicates = con.execute(
        "SELECT count(*) FROM (SELECT snapshot_date, provider, sku, gpu_count, tier, community, commitment_months,"
        " region, price_basis FROM price_snapshots GROUP BY ALL HAVING count(*) > 1)"
    ).fetchall()[0][0]
    assert duplicates == 0
    offers = warehouse_scale.one_day_of_offers(con, dt.date(2026, 1, 31))  # every row is a valid Offer
    assert (
        sum(len(v) for v in offers.values())
        == con.execute(
            "SELECT count(*) FROM price_snapshots WHERE snapshot_date = DATE '2026-01-31'"
        ).fetchall()[0][0]
    )
    con.close()


def _reference_periods(rows: list[tuple], provider_dates: dict[str, list[dt.date]]) -> set[tuple]:
    """Price periods computed the slow, obvious way (the documented semantics of price_history)."""
    series: dict[tuple, list[tuple]] = defaultdict(list)
    for key, day, price, gpu_raw, source in rows:
        series[key].append((day, price, gpu_raw, source))
    out = set()
    for key, points in series.items():
        points.sort()
        periods: list[list[tuple]] = []
        for point in points:
            if periods and periods[-1][-1][1] == point[1]:
                periods[-1].append(point)
            else:
                periods.append([point])
        for index, period in enumerate(periods):
            last = period[-1]
            if index + 1 < len(periods):
                valid_to = periods[index + 1][0][0]
            else:
                later = [d for d in provider_dates[key[1]] if d > last[0]]
                valid_to = later[0] if later else None
            out.add(
                (*key, float(period[0][1]), period[0][0], valid_to, last[0], len(period), last[2], last[3])
            )
    return out


def test_price_history_view_matches_a_reference_on_synthetic_history(tmp_path: Path) -> None:
    """The benchmark times analytics.price_history; make sure it is timing the right answer
    (steps, gaps, late and withdrawn offers all occur in the synthetic history)."""
    con = connect_writer(tmp_path / "w.duckdb")
    generate_history(con, days=240, offers_per_provider=14)
    key = "gpu, provider, sku, gpu_count, tier, community, commitment_months, region, price_basis, effective_from"
    width = len(key.split(","))
    rows = con.execute(
        f"SELECT {key}, snapshot_date, usd_per_gpu_hour, gpu_raw, source FROM price_snapshots"
    ).fetchall()
    rows = [(r[:width], *r[width:]) for r in rows]
    dates: dict[str, list[dt.date]] = defaultdict(list)
    for provider, day in con.execute(
        "SELECT DISTINCT provider, snapshot_date FROM price_snapshots ORDER BY 2"
    ).fetchall():
        dates[provider].append(day)
    view = con.execute(
        f"SELECT {key}, usd_per_gpu_hour::DOUBLE, valid_from, valid_to, last_seen, snapshots, gpu_raw, source"
        " FROM analytics.price_history"
    ).fetchall()
    expected = _reference_periods(rows, dates)
    assert len(view) == len(set(view)) == len(expected)
    assert set(view) == expected
    assert len(expected) > len({r[0] for r in rows})  # prices do change: more periods than series
    con.close()


# ---------------------------------------------------------------- 4. end to end
def test_peak_memory_includes_a_grandchild() -> None:
    allocate = "x = bytearray(150_000_000); x[::4096] = b'1' * len(x[::4096])"
    cmd = [
        sys.executable,
        "-c",
        f"import subprocess, sys; subprocess.run([sys.executable, '-c', {allocate!r}], check=True)",
    ]
    stats = end_to_end.measure_process(cmd, env={"PATH": "/usr/bin:/bin"}, cwd=Path.cwd())
    assert stats.returncode == 0
    assert stats.peak_rss_mb >= 150
    assert stats.wall_s > 0


@pytest.mark.slow
def test_end_to_end_benchmark_reports_absolute_times_against_the_budget() -> None:
    quick = [sys.executable, "-c", "import json"]
    heavier = [sys.executable, "-c", "import numpy, pandas"]
    figures = end_to_end.measure(repeats=1, command=quick, reports_command=heavier, prime_command=quick)
    assert_well_formed(
        figures,
        {"e2e.run_no_reports_wall_s", "e2e.run_wall_s", "e2e.first_run_wall_s", "e2e.run_peak_rss_mb"},
    )
    daily = figures[0]
    assert daily.baseline_value == end_to_end.DAILY_RUN_BUDGET_S and daily.passed is True
    assert figures[1].passed is None and figures[2].passed is None  # reference figures
    assert figures[3].value > 0 and figures[3].value >= daily.details["peak_rss_mb"]["no_reports"]
    assert daily.details["archive_date"]


def test_a_failing_command_is_an_error_not_a_figure() -> None:
    with pytest.raises(RuntimeError, match="exited 3"):
        end_to_end.measure(
            repeats=1,
            command=[sys.executable, "-c", "raise SystemExit(3)"],
            reports_command=[sys.executable, "-c", "pass"],
            prime_command=[sys.executable, "-c", "pass"],
        )


# ---------------------------------------------------------------- the runner
def test_runner_writes_results_and_reports_errors(tmp_path: Path, monkeypatch, capsys) -> None:
    def broken() -> list[Figure]:
        raise ValueError("disk full")

    monkeypatch.setitem(run.BENCHMARKS, "parse", lambda: parse_speed.measure(repeats=1))
    monkeypatch.setitem(run.BENCHMARKS, "sweep", broken)
    out = tmp_path / "results.json"
    code = run.main(["--only", "parse,sweep", "--output", str(out)])
    assert code == 1  # a benchmark that could not run fails the run
    results = json.loads(out.read_text())
    assert results["errors"] == {"sweep": "ValueError: disk full"}
    names = [f["name"] for f in results["figures"]]
    assert names == [
        "parse.six_pages_seconds",
        "parse.pages_per_s_vs_html_parser",
        "parse.pages_per_s_vs_lxml_only",
    ]
    printed = capsys.readouterr().out.splitlines()
    assert sum(line.split()[1] in names for line in printed if line[:4] in ("PASS", "FAIL", "info")) == 3
    assert any(line.startswith("ERROR sweep") for line in printed)


def test_runner_rejects_an_unknown_benchmark() -> None:
    with pytest.raises(SystemExit) as exit_info:
        run.main(["--only", "parse,speed"])
    assert exit_info.value.code == 2


def test_strict_mode_fails_on_a_missed_target(tmp_path: Path, monkeypatch) -> None:
    missed = Figure(
        name="x.y",
        value=2.0,
        unit="s",
        baseline="b",
        baseline_value=1.0,
        ratio_meaning="m",
        target=(Bound(on="value", op="<=", limit=1.0),),
    )
    monkeypatch.setattr(run, "BENCHMARKS", {"x": lambda: [missed]})
    assert run.main(["--output", str(tmp_path / "r.json")]) == 0
    assert run.main(["--strict", "--output", str(tmp_path / "r.json")]) == 1
    assert np.isclose(json.loads((tmp_path / "r.json").read_text())["figures"][0]["ratio"], 2.0)
