"""Chart drawing shared with a helper process: the same SVG whoever draws it, and every chart
still drawn when the helper cannot start, dies or talks nonsense."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from conftest_reports import NOW, WEEK, build_warehouse, catalog
from markupsafe import Markup

from gpuprice.reports import build, chart_jobs, drawing
from gpuprice.reports.render import render_weekly_reports
from gpuprice.reports.weeks import IsoWeek
from gpuprice.warehouse.connection import connect_reader

# Every test here renders charts (some through the helper process): the slow set.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_warehouse(tmp_path_factory.mktemp("wh") / "warehouse.duckdb")


@pytest.fixture(scope="module")
def jobs(warehouse: Path) -> list[chart_jobs.ChartJob]:
    con = connect_reader(warehouse)
    try:
        _, reports = build.build_week(con, IsoWeek.parse(WEEK), generated_at=NOW, catalog=catalog())
    finally:
        con.close()
    listed = [job for i, r in enumerate(reports) for job in chart_jobs.workload_jobs(r, chart_prefix=f"w{i}")]
    return chart_jobs.unique_jobs(listed)


@pytest.fixture(scope="module")
def drawn_here(jobs: list[chart_jobs.ChartJob]) -> dict[str, Markup]:
    return drawing.draw_charts(jobs)


def test_jobs_cover_every_chart_once(jobs: list[chart_jobs.ChartJob]) -> None:
    kinds = {type(job) for job in jobs}
    assert kinds == {chart_jobs.MemoryChartJob, chart_jobs.CostChartJob, chart_jobs.HistoryChartJob}
    keys = [job.key for job in jobs]
    assert len(keys) == len(set(keys))


def test_history_keys_are_id_safe_and_never_shared() -> None:
    assert chart_jobs.history_key("h100-sxm") == "history-h100-sxm"
    slash, dash = chart_jobs.history_key("h100/sxm"), chart_jobs.history_key("h100 sxm")
    assert slash != dash and slash.startswith("history-h100-sxm-")
    assert all(c.isalnum() or c in "-_" for c in slash)


def test_helper_process_draws_the_same_svg(
    jobs: list[chart_jobs.ChartJob], drawn_here: dict[str, Markup], tmp_path: Path
) -> None:
    """The real helper, fed every job over its pipe: byte-identical charts, then a clean exit;
    started in a folder holding another `reports` package, which it must not pick up."""
    decoy = tmp_path / "reports"
    decoy.mkdir()
    (decoy / "__init__.py").write_text('raise SystemExit("imported the wrong reports package")\n')
    requests = b"".join(pickle.dumps(job) for job in jobs)
    done = subprocess.run(
        drawing.helper_command(),
        input=requests,
        capture_output=True,
        timeout=120,
        cwd=tmp_path,
        env=drawing.helper_env(),
    )
    assert done.returncode == 0, done.stderr.decode()[-500:]
    replies = []
    stream = io.BytesIO(done.stdout)
    while stream.tell() < len(done.stdout):
        replies.append(pickle.load(stream))
    assert [key for key, _ in replies] == [job.key for job in jobs]
    assert {key: svg for key, svg in replies} == {key: str(svg) for key, svg in drawn_here.items()}


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-c", "import sys; sys.exit(3)"],  # dies at once
        [
            sys.executable,
            "-c",
            "import sys; sys.stdin.buffer.read(1); sys.stdout.write('nonsense'); sys.stdout.flush()",
        ],
        ["/nonexistent/python-for-charts"],  # cannot start at all
    ],
    ids=["dies", "garbage", "missing"],
)
def test_every_chart_is_drawn_when_the_helper_fails(
    command: list[str], jobs: list[chart_jobs.ChartJob], drawn_here: dict[str, Markup]
) -> None:
    some = jobs[:3]
    with drawing.ChartDrawer(use_helper=True, command=command) as drawer:
        drawn = drawer.draw(some)
    assert drawn == {job.key: drawn_here[job.key] for job in some}
    assert not _helpers_alive()


@dataclass(frozen=True)
class _BrokenJob:
    key: str

    def draw(self) -> Markup:
        raise ValueError("chart data the charts cannot draw")


def test_a_chart_error_surfaces_here_and_ends_the_helper(jobs: list[chart_jobs.ChartJob]) -> None:
    with pytest.raises(ValueError, match="cannot draw"), drawing.ChartDrawer(use_helper=True) as drawer:
        drawer.draw([*jobs[:1], _BrokenJob("broken")])  # type: ignore[list-item]
    assert not _helpers_alive()


def test_reports_are_identical_with_the_helper(
    warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    serial_root = tmp_path_factory.mktemp("serial")
    render_weekly_reports(
        WEEK, analytics_file=warehouse, out_root=serial_root, generated_at=NOW, catalog=catalog()
    )
    monkeypatch.setattr(drawing, "MIN_CHARTS_FOR_HELPER", 1)
    monkeypatch.setattr(drawing, "usable_cpus", lambda: 2)
    paths = render_weekly_reports(
        WEEK, analytics_file=warehouse, out_root=tmp_path, generated_at=NOW, catalog=catalog()
    )
    assert len(paths) == 2 + 2 * len(catalog())
    for path in paths:
        assert path.read_bytes() == (serial_root / WEEK / path.name).read_bytes(), path.name
    assert not _helpers_alive()


def test_helper_only_for_enough_charts_and_a_spare_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drawing, "usable_cpus", lambda: 2)
    assert drawing.helper_pays(drawing.MIN_CHARTS_FOR_HELPER)
    assert not drawing.helper_pays(drawing.MIN_CHARTS_FOR_HELPER - 1)
    monkeypatch.setattr(drawing, "usable_cpus", lambda: 1)
    assert not drawing.helper_pays(10 * drawing.MIN_CHARTS_FOR_HELPER)


def _helpers_alive() -> list[psutil.Process]:
    alive = []
    for child in psutil.Process().children(recursive=True):
        try:
            if (
                "gpuprice.reports.chart_helper" in " ".join(child.cmdline())
                and child.status() != psutil.STATUS_ZOMBIE
            ):
                alive.append(child)
        except psutil.Error:
            continue
    return alive


def test_fitted_margins_keep_every_label_inside_the_figure() -> None:
    """What constrained layout did: long tick labels, an outside legend and a title all fit."""
    import io as _io

    from matplotlib.backends.backend_svg import RendererSVG
    from matplotlib.figure import Figure

    from gpuprice.reports.svg import SVG_DPI, fit_axes

    fig = Figure(figsize=(5, 3), dpi=SVG_DPI)
    ax = fig.subplots()
    ax.plot([1, 2, 3], [1_000_000, 2_500_000, 3_000_000], label="a rather long legend entry")
    ax.yaxis.set_major_formatter(lambda v, _: f"${v:,.0f} per run")
    ax.set_title("a title", loc="left")
    ax.set_xlabel("hours")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    width, height = fig.get_size_inches()

    def outer():  # everything drawn, in inches
        return fig.get_tightbbox(RendererSVG(width * SVG_DPI, height * SVG_DPI, _io.StringIO()))

    before = outer()
    assert before.x0 < 0 or before.x1 > width  # matplotlib's default margins cut the labels off
    fit_axes(fig)
    after = outer()
    assert after.x0 >= -0.01 and after.x1 <= width + 0.01
    assert after.y0 >= -0.01 and after.y1 <= height + 0.01
    box = ax.get_position()
    assert box.width > 0.2 and box.height > 0.5  # the plot keeps most of the room it can have


def test_a_prestarted_helper_is_taken_by_the_next_drawer_and_draws(
    jobs: list[chart_jobs.ChartJob], drawn_here: dict[str, Markup], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(drawing, "usable_cpus", lambda: 2)
    drawing.prestart_helper()
    try:
        (prestarted,) = _helpers_alive()
        drawing.prestart_helper()  # one waiting helper at most
        assert [p.pid for p in _helpers_alive()] == [prestarted.pid]
        with drawing.ChartDrawer(use_helper=True) as drawer:
            assert drawing._waiting_helper is None  # taken, not started anew
            assert [p.pid for p in _helpers_alive()] == [prestarted.pid]
            drawn = drawer.draw(jobs)
        assert drawn == drawn_here
        assert not _helpers_alive()
    finally:
        drawing.end_prestarted_helper()


def test_a_prestarted_helper_nobody_takes_is_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drawing, "usable_cpus", lambda: 2)
    drawing.prestart_helper()
    assert len(_helpers_alive()) == 1
    with drawing.ChartDrawer(use_helper=False) as drawer:  # a drawer without a helper leaves it
        assert drawer.draw([]) == {}
    assert len(_helpers_alive()) == 1
    drawing.end_prestarted_helper()
    assert not _helpers_alive()
    monkeypatch.setattr(drawing, "usable_cpus", lambda: 1)
    drawing.prestart_helper()  # no second CPU: nothing to start
    assert drawing._waiting_helper is None and not _helpers_alive()


def test_the_helper_loads_neither_pandas_nor_duckdb() -> None:
    # Its memory counts in the run's peak (it lives beside the whole daily run): matplotlib and
    # the chart jobs' data classes only (~75 MB, against ~140 MB with pandas and DuckDB).
    code = (
        "import sys; from gpuprice.reports import chart_helper, charts, chart_jobs;"
        " print(sorted(m for m in ('pandas', 'duckdb', 'dagster') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=drawing.helper_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
