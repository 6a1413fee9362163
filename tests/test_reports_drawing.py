"""Chart drawing, in process: every distinct chart once, the same SVG each time it is drawn."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest_reports import NOW, WEEK, build_warehouse, catalog
from markupsafe import Markup

from gpuprice.reports import build, chart_jobs, drawing
from gpuprice.reports.weeks import IsoWeek
from gpuprice.warehouse.connection import connect_reader

# Every test here renders charts: the slow set.
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


def test_each_distinct_chart_is_drawn_once_and_the_same_each_time(
    jobs: list[chart_jobs.ChartJob], drawn_here: dict[str, Markup]
) -> None:
    assert set(drawn_here) == {job.key for job in jobs}
    assert all(str(svg).lstrip().startswith("<svg") for svg in drawn_here.values())
    again = drawing.draw_charts([*jobs[:3], *jobs[:3]])  # a repeated job is drawn once
    assert again == {job.key: drawn_here[job.key] for job in jobs[:3]}


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
