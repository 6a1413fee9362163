"""Write a week's reports under ``<reports>/<YYYY-Www>/``: index.html, summary.md, and per
workload ``<workload>.html`` + ``<workload>.md``.

Entry point for the weekly Dagster asset and ``gpuprice report``: :func:`render_weekly_reports`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import duckdb

from gpuprice.errors import BadInput, unknown_choice
from gpuprice.reports import build, chart_jobs, drawing, loading, pages, workload_info
from gpuprice.reports.pages import WorkloadLinks
from gpuprice.reports.weeks import IsoWeek

# What render_weekly_reports tells its progress listener, in order.
RENDER_STAGES = ("reading the week", "drawing the charts", "writing the pages")


def resolve_week(con: duckdb.DuckDBPyConnection, week: IsoWeek | str | dt.date | None) -> IsoWeek:
    """``None``: the ISO week of the newest snapshot; a date: its ISO week; text: ``YYYY-Www``."""
    if week is None:
        return loading.default_week(con)
    if isinstance(week, IsoWeek):
        return week
    if isinstance(week, dt.date):
        return IsoWeek.of(week)
    return IsoWeek.parse(week)


def safe_filename(name: str) -> str:
    """A workload name as a file name: letters, digits, dot, dash and underscore only."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")
    return cleaned or "workload"


def _unique_stems(names: Iterable[str]) -> dict[str, str]:
    stems: dict[str, str] = {}
    used = {"index", "summary"}
    for name in names:
        stem = base = safe_filename(name)
        counter = 2
        while stem.lower() in used:
            stem, counter = f"{base}-{counter}", counter + 1
        used.add(stem.lower())
        stems[name] = stem
    return stems


def _write_atomic(path: Path, text: str) -> Path:
    """Write via a temporary file so a reader (or a browser refresh) never sees half a page."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def _open_published(analytics_file: Path | None) -> tuple[duckdb.DuckDBPyConnection, Path]:
    if analytics_file is None:
        raise ValueError("render_weekly_reports needs a connection or the analytics file to read")
    path = analytics_file
    if not path.exists():
        raise BadInput(f"no published warehouse at {path}; run `gpuprice run` first")
    from gpuprice.warehouse.connection import connect_reader

    return connect_reader(path), path


def _write_empty_week(
    con: duckdb.DuckDBPyConnection, week: IsoWeek, out_root: Path, generated_at: dt.datetime | None
) -> Path:
    """The one page of a week with no scraped data: it says so, and when scraping began."""
    out_dir = out_root / str(week)
    out_dir.mkdir(parents=True, exist_ok=True)
    html = pages.render_empty_week(
        week, loading.first_scraped_date(con), generated_at or dt.datetime.now(dt.UTC)
    )
    return _write_atomic(out_dir / "index.html", html)


def render_weekly_reports(
    week: IsoWeek | str | dt.date | None = None,
    *,
    out_root: Path,
    analytics_file: Path | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
    workload: str | None = None,
    generated_at: dt.datetime | None = None,
    catalog: Mapping[str, Any] | None = None,
    progress: Callable[[str], None] = lambda stage: None,
) -> list[Path]:
    """Write the week's reports and return their paths, ``index.html`` first.

    ``progress`` hears each of :data:`RENDER_STAGES` as it starts (the CLI draws a bar).

    Reads ``con`` when given, else the published read-only copy ``analytics_file``; writes under
    ``out_root``/<YYYY-Www>/. With ``workload`` only that workload's pages are
    (re)written, plus the index and summary, which always cover every workload. ``catalog``
    (name -> workload) replaces ``models.workloads.load_workloads()``.
    """
    return _render_week(week, analytics_file, out_root, con, workload, generated_at, catalog, progress)


def _render_week(
    week: IsoWeek | str | dt.date | None,
    analytics_file: Path | None,
    out_root: Path,
    con: duckdb.DuckDBPyConnection | None,
    workload: str | None,
    generated_at: dt.datetime | None,
    catalog: Mapping[str, Any] | None,
    progress: Callable[[str], None],
) -> list[Path]:
    progress(RENDER_STAGES[0])
    with contextlib.ExitStack() as reading_stage:  # the connection closes before drawing
        source_path: Path | None = None
        if con is None:
            con, source_path = _open_published(analytics_file)
            reading_stage.callback(con.close)
        iso_week = resolve_week(con, week)
        if not loading.has_scraped_data(con, iso_week):
            loading.as_of_date(con, iso_week)  # a week before all data stays bad input
            return [_write_empty_week(con, iso_week, out_root, generated_at)]
        catalog = workload_info.load_catalog() if catalog is None else catalog
        names = build.workload_order(con, iso_week, catalog)
        if workload is not None and workload not in names:
            raise unknown_choice("workload", workload, names)
        overview, reports = build.build_week(
            con,
            iso_week,
            generated_at=generated_at or dt.datetime.now(dt.UTC),
            catalog=catalog,
            warehouse=str(source_path) if source_path else None,
        )
    out_dir = out_root / str(iso_week)
    out_dir.mkdir(parents=True, exist_ok=True)
    progress(RENDER_STAGES[1])
    stems = _unique_stems(names)
    selected = [r for r in reports if workload is None or r.definition.name == workload]
    drawn = drawing.draw_charts(
        [job for r in selected for job in chart_jobs.workload_jobs(r, chart_prefix=stems[r.definition.name])]
    )

    progress(RENDER_STAGES[2])
    written: list[Path] = []
    for report in selected:
        stem = stems[report.definition.name]
        html = pages.render_workload_html(report, chart_prefix=stem, drawn=drawn)
        written.append(_write_atomic(out_dir / f"{stem}.html", html))
        written.append(
            _write_atomic(out_dir / f"{stem}.md", pages.render_workload_md(report, html_name=f"{stem}.html"))
        )

    # Link every workload page present in the folder (earlier runs may have written the others).
    links = {
        name: WorkloadLinks(html=f"{stem}.html", md=f"{stem}.md")
        for name, stem in stems.items()
        if (out_dir / f"{stem}.html").exists()
    }
    index = _write_atomic(out_dir / "index.html", pages.render_index(overview, links))
    summary = _write_atomic(
        out_dir / "summary.md", pages.render_summary(overview, index_path=f"reports/{iso_week}/index.html")
    )
    return [index, summary, *written]
