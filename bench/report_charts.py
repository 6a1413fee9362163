"""Figure 6: report rendering per chart, measured on its own (apart from the daily run).

A fresh warehouse gets the newest sample date (``gpuprice run`` without reports, untimed); then
the week's reports are rendered and timed, and the time is divided by the charts they hold
(inline ``<svg>`` elements). Baseline: one bare matplotlib line chart of 30 points saved as
SVG, the floor of any chart drawn with matplotlib. Reference figure (no target).
"""

from __future__ import annotations

import io
import statistics
import tempfile
import time
from pathlib import Path

from bench.figures import Figure, median_seconds
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE, newest_archive_date


def _bare_chart() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 3))
    axes.plot(range(30), [1 + (i % 7) / 10 for i in range(30)])
    axes.set_title("bare chart")
    figure.savefig(io.BytesIO(), format="svg")
    plt.close(figure)


def measure(repeats: int = 2) -> list[Figure]:
    from gpuprice.pipelines.orchestration import run_day
    from gpuprice.reports.render import render_weekly_reports

    day = newest_archive_date(SAMPLE_ARCHIVE)
    if day is None:
        raise FileNotFoundError(f"no recorded pages under {SAMPLE_ARCHIVE}")
    with tempfile.TemporaryDirectory(prefix="gpuprice-bench-reports-") as tmp:
        home = Path(tmp)
        run_day(
            day,
            source="archive",
            home=home,
            archive_dir=SAMPLE_ARCHIVE,
            render_reports=False,
            progress=lambda m: None,
        )
        times, charts = [], 0
        for _ in range(repeats):
            start = time.perf_counter()
            paths = render_weekly_reports(
                day, analytics_file=home / "analytics.duckdb", out_root=home / "reports"
            )
            times.append(time.perf_counter() - start)
            charts = sum(p.read_text(encoding="utf-8").count("<svg") for p in paths if p.suffix == ".html")
    if charts == 0:
        raise RuntimeError("the reports hold no chart")
    _bare_chart()  # import and font cache outside the timing
    bare = median_seconds(_bare_chart, 5)
    render = statistics.median(times)
    return [
        Figure(
            name="reports.seconds_per_chart",
            value=render / charts,
            unit="s/chart",
            baseline="one bare matplotlib line chart saved as SVG",
            baseline_value=bare,
            ratio_meaning="times a bare chart",
            details={"charts": charts, "render_s": render, "week_of": day.isoformat()},
        )
    ]
