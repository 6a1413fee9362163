"""Render report data into HTML and Markdown pages (Jinja2).

HTML: autoescape on; only chart SVG (checked inert by ``reports.svg``) and our own CSS are
marked safe. Markdown: every ``{{ value }}`` is escaped by the environment's ``finalize`` unless
the template marks it with ``md_safe`` (static markup and links we build ourselves).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined
from jinja2.bccache import Bucket
from markupsafe import Markup

from gpuprice.reports import chart_jobs, drawing
from gpuprice.reports import formatting as fmt
from gpuprice.reports.data import WeekOverview, WorkloadReport
from gpuprice.reports.links import pricing_url
from gpuprice.reports.loading import STALE_AFTER_DAYS
from gpuprice.reports.memory_verdict import MEMORY_PARTS
from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS

TOP_OFFERS_HTML = 20
TOP_OFFERS_MD = 10
SUMMARY_CHANGES = 8


class MdSafe(str):
    """Markdown the report itself wrote (links, symbols): not escaped again."""


def md_safe(value: object) -> MdSafe:
    return MdSafe(str(value))


def _md_finalize(value: Any) -> str:
    if isinstance(value, MdSafe):
        return value
    return fmt.md_escape(value)


def tier_label(offer: Any) -> str:
    """on-demand / spot / reserved 12 mo, with community and lowest-now qualifiers."""
    tier = getattr(offer, "tier", "") or ""
    label = tier.replace("_", "-")
    months = getattr(offer, "commitment_months", None)
    if months:
        label += f" {months} mo"
    if getattr(offer, "community", False):
        label += ", community"
    if getattr(offer, "price_basis", None) == "lowest_now":
        label += ", lowest now"
    return label


def qualifiers(offer: Any) -> str:
    """(community, lowest now) for offers that are not the plain list price of an operated cloud;
    no leading space: templates put it (Markdown cells are stripped, which ate it)."""
    notes = []
    if getattr(offer, "community", False):
        notes.append("community")
    if getattr(offer, "price_basis", None) == "lowest_now":
        notes.append("lowest now")
    return f"({', '.join(notes)})" if notes else ""


def sharding_label(sharding: str | None) -> str:
    """ "no sharding" for plain data parallel or one card: "none" would read as "nothing fits"."""
    return "no sharding" if sharding in (None, "", "none") else str(sharding)


def cost_range(offer: Any) -> str:
    """The total cost at the ends of the throughput error band ('' for rankings without it)."""
    return fmt.usd_range(
        getattr(offer, "total_cost_low_usd", None), getattr(offer, "total_cost_high_usd", None)
    )


def hours_range(offer: Any) -> str:
    """The compute hours at the ends of the throughput error band ('' for rankings without it)."""
    return fmt.hours_range(getattr(offer, "hours_low", None), getattr(offer, "hours_high", None))


_FILTERS = {
    "cost_range": cost_range,
    "hours_range": hours_range,
    "qualifiers": qualifiers,
    "sharding_label": sharding_label,
    "usd": fmt.usd,
    "rate": fmt.usd_rate,
    "hours": fmt.hours,
    "duration": fmt.duration,
    "gb": fmt.gb,
    "pct": fmt.pct,
    "ratio": fmt.ratio,
    "tokens": fmt.tokens,
    "day": fmt.day,
    "ts": fmt.timestamp,
    "humanize": fmt.humanize,
    "tier_label": tier_label,
}


class CompiledTemplateCache(FileSystemBytecodeCache):
    """Jinja's compiled templates, kept in a per-user folder of the temp directory (compiling
    them costs ~0.18 s a run), keyed by each template's source checksum: an edit recompiles it."""

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:  # a folder that cannot be written only costs the compile time
            return


@functools.cache
def _compiled_templates() -> CompiledTemplateCache | None:
    try:
        return CompiledTemplateCache()
    except (OSError, RuntimeError):  # no safe per-user temp folder: compile every run
        return None


def _environment(*, html: bool) -> Environment:
    env = Environment(
        loader=PackageLoader("gpuprice.reports", "templates"),
        bytecode_cache=_compiled_templates(),
        autoescape=html,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=None if html else _md_finalize,
    )
    env.filters.update(_FILTERS)
    env.globals.update(
        pricing_url=pricing_url,
        stale_after_days=STALE_AFTER_DAYS,
        max_price_age_days=MAX_PRICE_AGE_DAYS,
        md_safe=md_safe,
    )
    return env


@functools.cache
def html_env() -> Environment:
    return _environment(html=True)


@functools.cache
def md_env() -> Environment:
    return _environment(html=False)


@functools.cache
def _css() -> Markup:
    return Markup(
        resources.files("gpuprice.reports").joinpath("templates/report.css").read_text(encoding="utf-8")
    )


@dataclass(frozen=True)
class WorkloadLinks:
    """Relative file names of one workload's pages inside the week folder."""

    html: str
    md: str


def render_index(overview: WeekOverview, links: Mapping[str, WorkloadLinks]) -> str:
    return (
        html_env()
        .get_template("index.html.j2")
        .render(css=_css(), meta=overview.meta, overview=overview, links=dict(links))
    )


def render_empty_week(week: Any, first_scraped: Any, generated_at: Any) -> str:
    """The single page of a week with no scraped prices (``first_scraped``: None when none at all)."""
    return (
        html_env()
        .get_template("empty_week.html.j2")
        .render(css=_css(), week=week, first_scraped=first_scraped, generated_at=generated_at)
    )


def render_workload_html(
    report: WorkloadReport, chart_prefix: str = "w", drawn: Mapping[str, Markup] | None = None
) -> str:
    """One workload page. ``drawn``: its charts' SVG by job key (``reports.chart_jobs``), as
    drawn for the whole week at once; without it the page's charts are drawn here."""
    if drawn is None:
        drawn = drawing.draw_charts(chart_jobs.workload_jobs(report, chart_prefix))
    return (
        html_env()
        .get_template("workload.html.j2")
        .render(
            css=_css(),
            meta=report.meta,
            report=report,
            top=report.rankings[:TOP_OFFERS_HTML],
            charts=chart_jobs.page_charts(report, chart_prefix, drawn),
        )
    )


def _bar_parts(report: WorkloadReport) -> list[str]:
    """Breakdown columns of the Markdown memory table (the total has its own column)."""
    present = {part for bar in report.memory.bars for part in bar.parts}
    return [p for p in MEMORY_PARTS if p in present]


def render_workload_md(report: WorkloadReport, html_name: str) -> str:
    return (
        md_env()
        .get_template("workload.md.j2")
        .render(
            meta=report.meta,
            report=report,
            top=report.rankings[:TOP_OFFERS_MD],
            bar_parts=_bar_parts(report),
            html_name=html_name,
            html_href=html_name,
        )
    )


def render_summary(overview: WeekOverview, index_path: str) -> str:
    return (
        md_env()
        .get_template("summary.md.j2")
        .render(meta=overview.meta, overview=overview, summary_changes=SUMMARY_CHANGES, index_path=index_path)
    )
