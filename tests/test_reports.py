"""Weekly reports: week semantics, formatting, escaping, self-containment and the CLI,
all from the small hand-made warehouse in conftest_reports.py."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pytest
from conftest_reports import CATALOG_NAMES, IMG, NOW, SCRIPT, WEEK, build_warehouse, catalog
from markdown_it import MarkdownIt

from gpuprice.errors import BadInput
from gpuprice.reports import formatting as fmt
from gpuprice.reports import loading
from gpuprice.reports.changes import week_changes
from gpuprice.reports.links import pricing_url
from gpuprice.reports.render import render_weekly_reports, safe_filename
from gpuprice.reports.weeks import IsoWeek
from gpuprice.scrapers.offer import PROVIDERS

WORKLOADS = CATALOG_NAMES


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_warehouse(tmp_path_factory.mktemp("wh") / "warehouse.duckdb")


@pytest.fixture(scope="module")
def written(warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The W44 reports, rendered once for the module (rendering is the slow part)."""
    out = tmp_path_factory.mktemp("out")
    paths = render_weekly_reports(
        None, analytics_file=warehouse, out_root=out, generated_at=NOW, catalog=catalog()
    )
    return {p.name: p for p in paths}


@pytest.fixture
def con(warehouse: Path):
    from gpuprice.warehouse.connection import connect_reader

    connection = connect_reader(warehouse)
    yield connection
    connection.close()


class _Elements(HTMLParser):
    """Collects every start tag with its attributes (the parser a browser would start from)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def elements(html: str) -> _Elements:
    parser = _Elements()
    parser.feed(html)
    return parser


def markdown_html(text: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(text)


# ---------------------------------------------------------------------------- weeks


def test_iso_week_parsing_and_bounds() -> None:
    week = IsoWeek.parse("2026-W44")
    assert (week.start, week.end) == (dt.date(2026, 10, 26), dt.date(2026, 11, 1))
    assert IsoWeek.parse("2026w44") == week and str(week) == "2026-W44"
    assert IsoWeek.of(dt.date(2027, 1, 1)) == IsoWeek(2026, 53)  # ISO year, not calendar year
    assert IsoWeek.parse("2020-W53").end == dt.date(2021, 1, 3)


@pytest.mark.parametrize("text", ["2026-44", "W44", "2026-W00", "2025-W53", "2026-W44x", "last week"])
def test_bad_week_names_value_and_form(text: str) -> None:
    with pytest.raises(BadInput) as info:
        IsoWeek.parse(text)
    message = str(info.value)
    assert repr(text) in message and "2026-W44" in message and "\n" not in message


# ---------------------------------------------------------------------------- formatting


def test_numbers_are_formatted_for_people() -> None:
    assert fmt.usd(1234.561) == "$1,234.56"
    assert fmt.usd(-3) == "-$3.00"
    assert fmt.usd_rate(2.4) == "$2.40" and fmt.usd_rate(0.045) == "$0.045"
    assert fmt.hours(3.21) == "3.2 h" and fmt.hours(0.25) == "0.25 h"
    assert fmt.duration(75) == "75.0 h (3.1 d)"
    assert fmt.gb(52.5) == "52.5 GB" and fmt.gb(1128) == "1,128 GB"
    assert fmt.pct(0.123) == "+12.3 %" and fmt.pct(-0.1) == "-10.0 %"
    assert fmt.ratio(0.38) == "38.0 %"
    assert fmt.tokens(1.5e9) == "1.5B" and fmt.tokens(2e11) == "200B"
    assert fmt.usd(None) == fmt.MISSING and fmt.gb(float("nan")) == fmt.MISSING
    assert fmt.humanize("storage_usd") == "Storage USD"


def test_markdown_escape_neutralises_pipes_and_markup() -> None:
    cell = fmt.md_escape("a | b *bold* [x](javascript:1) <b>`c`</b>\nnext")
    assert "|" not in cell.replace("\\|", "")
    rendered = markdown_html(f"| h |\n|---|\n| {cell} |\n")
    assert (
        "<strong>" not in rendered
        and "<em>" not in rendered
        and "<a " not in rendered
        and "<b>" not in rendered
    )
    assert rendered.count("<td>") == 1 and "&lt;b&gt;" in rendered


# ---------------------------------------------------------------------------- week data


def test_default_week_is_the_newest_snapshots_week(con) -> None:
    assert loading.default_week(con) == IsoWeek.parse(WEEK)


def test_week_before_any_data_is_bad_input(con) -> None:
    with pytest.raises(BadInput, match="2025-W01.*covers"):
        loading.as_of_date(con, IsoWeek.parse("2025-W01"))


def test_week_changes_are_only_inside_the_week_biggest_first(con) -> None:
    w44 = week_changes(con, IsoWeek.parse(WEEK))
    assert [(c.provider, round(c.change, 3)) for c in w44] == [
        (SCRIPT, -0.154),
        ("lambda", 0.100),
        ("nebius", -0.100),
        ("runpod", -0.081),
    ]
    w43 = week_changes(con, IsoWeek.parse("2026-W43"))
    assert [(c.provider, c.sku, c.snapshot_date) for c in w43] == [
        ("runpod", "H100 SXM", dt.date(2026, 10, 20))
    ]


def test_freshness_flags_failed_and_missing_providers(con) -> None:
    fresh = {f.provider: f for f in loading.freshness(con, IsoWeek.parse(WEEK))}
    assert not fresh["runpod"].stale and fresh["runpod"].last_success_date == dt.date(2026, 10, 30)
    crusoe = fresh["crusoe"]
    assert crusoe.stale and crusoe.last_status == "failed" and crusoe.days_since_success == 8
    assert "no price structure" in crusoe.last_error
    assert fresh["massedcompute"].stale and fresh["massedcompute"].last_success_date is None
    # Seen from W43's end (2026-10-25), crusoe had failed for three days already: still stale.
    earlier = {f.provider: f for f in loading.freshness(con, IsoWeek.parse("2026-W43"))}
    assert earlier["crusoe"].days_since_success == 3 and earlier["runpod"].last_success_date == dt.date(
        2026, 10, 25
    )


def test_current_prices_are_the_newest_snapshot_at_or_before_the_week(con) -> None:
    w43 = {
        (o["provider"], o["sku"], o["tier"], o["community"]): o
        for o in loading.current_offers(con, IsoWeek.parse("2026-W43"))
    }
    assert w43[("lambda", "gpu_8x_h100_sxm5", "on_demand", False)]["usd_per_gpu_hour"] == 2.99
    assert w43[("crusoe", "H100 HGX", "on_demand", False)]["snapshot_date"] == dt.date(2026, 10, 22)
    cheapest = {c.gpu: c for c in loading.cheapest_by_gpu(loading.current_offers(con, IsoWeek.parse(WEEK)))}
    assert "unknown" not in cheapest
    assert cheapest["l40s"].on_demand.usd_per_gpu_hour == 0.79  # not the $0.10 public report of the same day
    assert (
        cheapest["h200-sxm"].on_demand.provider == "nebius"
        and cheapest["h200-sxm"].on_demand.usd_per_gpu_hour == 3.15
    )
    assert cheapest["h100-sxm"].spot.usd_per_gpu_hour == 1.75
    assert cheapest["h100-sxm"].reserved.commitment_months == 12


@pytest.mark.slow
def test_scheduled_prices_count_from_their_effective_date(tmp_path: Path) -> None:
    path = build_warehouse(tmp_path / "w.duckdb", rankings=False)
    with duckdb.connect(str(path)) as writer:
        writer.execute(
            """
            INSERT INTO price_snapshots
            SELECT * REPLACE (CAST(9.99 AS DECIMAL(12, 4)) AS usd_per_gpu_hour, DATE '2026-11-04' AS effective_from)
            FROM price_snapshots WHERE provider = 'lambda' AND sku = 'gpu_8x_b200' AND snapshot_date = DATE '2026-10-30'
            """
        )
    with duckdb.connect(str(path), read_only=True) as reader:

        def b200(week: str) -> float:
            offers = loading.current_offers(reader, IsoWeek.parse(week))
            return next(o["usd_per_gpu_hour"] for o in offers if o["sku"] == "gpu_8x_b200")

        assert b200(WEEK) == 4.99  # announced, not yet in force at the end of W44
        assert b200("2026-W45") == 9.99  # in force by the end of W45 (same snapshot)


def test_price_history_anchors_the_window_and_marks_week_changes(con) -> None:
    week = IsoWeek.parse(WEEK)
    changes = week_changes(con, week)
    history = loading.price_history(con, ["h100-sxm", "l40s"], week, changes)
    h100 = next(h for h in history if h.gpu == "h100-sxm")
    lambda_line = next(s for s in h100.series if s.label == "lambda")
    # The daily cheapest lambda H100 offer: the public report (Sep 1), then 2.99 until the W44 move.
    assert lambda_line.points[0] == (dt.date(2026, 9, 1), 3.49)
    assert dict(lambda_line.points)[dt.date(2026, 10, 30)] == 3.29
    assert {s.label for s in h100.series} >= {"runpod", "runpod (community)", "crusoe"}
    assert {c.provider for c in h100.changes} == {"lambda", SCRIPT}
    # Months after the last page no price is current: no line is carried on from old pages.
    assert loading.price_history(con, ["l40s"], IsoWeek.parse("2027-W10"), []) == []
    # A line breaks (a NaN point) where its newest page passed the price-age limit.
    for series in h100.series:
        days = [d for d, p in series.points if p == p]
        for gap in (p for p in series.points if p[1] != p[1]):
            assert gap[0] not in days


# ---------------------------------------------------------------------------- written files


@pytest.mark.slow
def test_writes_index_summary_and_one_report_per_workload(written: dict[str, Path]) -> None:
    expected = {"index.html", "summary.md"} | {f"{w}.{ext}" for w in WORKLOADS for ext in ("html", "md")}
    assert set(written) == expected
    assert all(p.parent.name == WEEK for p in written.values())


@pytest.mark.slow
def test_index_shows_freshness_changes_cheapest_and_links(written: dict[str, Path]) -> None:
    html = written["index.html"].read_text()
    text = " ".join(" ".join(elements(html).text).split())
    assert "crusoe" in text and "no price structure found" in text
    status = text[text.find(" of ") - 3 :][:400]
    # The fixture scraped 7 providers; the 4 hyperscaler/marketplace providers never ran there.
    assert re.search(
        r"6 of 11 providers were stale on 2026-10-30: crusoe \(last success 2026-10-22, newest attempt "
        r"failed\), massedcompute \(no successful scrape\), azure \(no successful scrape\)",
        text,
    ), status
    assert "4 offers changed price this week (2026-10-26 to 2026-11-01)" in text
    assert "2026-10-25 (4 days earlier)" in text  # each change names its baseline and its age
    # Biggest move first, numbers formatted for people.
    assert text.index("-15.4 %") < text.index("+10.0 %") < text.index("-8.1 %")
    assert "$3.15" in text and "$1.75" in text
    hrefs = [a.get("href") for tag, a in elements(html).tags if tag == "a"]
    for workload in WORKLOADS:
        assert f"{workload}.html" in hrefs and f"{workload}.md" in hrefs
    assert "summary.md" in hrefs
    # The answer first: one row per workload with the best offer, its total, cost per checkpoint,
    # hours, warnings and price age, before every other section.
    assert text.index("Best offer per workload") < text.index("Price changes this week")
    assert (
        "llama-3.1-70b-qlora md runpod · 1× h100-sxm · spot $29.80 $25.58–$51.09 $2.98 16.0 h spot 0 d"
        in text
    )


def test_summary_leads_with_total_cost_and_warnings(written: dict[str, Path]) -> None:
    text = written["summary.md"].read_text()
    assert "| Workload | Best offer | Total cost | Per checkpoint | GPU time | Wall time | Warnings |" in text
    assert (
        "| llama-3.1-70b-qlora | 1× h100-sxm at runpod, spot | $29.80 ($25.58–$51.09) | $2.98 | $24.50 | 16.0 h | spot |"
        in text
    )


@pytest.mark.slow
def test_workload_report_has_definition_verdict_ranking_and_charts(written: dict[str, Path]) -> None:
    html = written["llama-3.1-70b-qlora.html"].read_text()
    parsed = elements(html)
    text = " ".join(" ".join(parsed.text).split())
    assert "Planning margin on memory 20.0 %" in text and "MFU assumed (per GPU type) 38.0 %" in text
    # The best offer's cost term by term, and the workload's cost assumptions with their meaning.
    assert "Total to the last checkpoint $29.80" in text and "Cost per successful checkpoint $2.98" in text
    assert "Expected wall hours 16.0 h" in text and "Checkpoints per run 10" in text
    assert "Storage USD per GB month" in text and "checkpoint storage" in text
    assert "Deadline 120.0 h (5.0 d)" in text and "Training tokens 50M" in text
    assert "5 of 5 GPU types on offer hold this workload" in text
    # Verdict words with the predicted peak and its error band (issue 33), not symbols.
    assert (
        "l40s 48.0 GB does not fit peak 52.5 GB (36.7 GB–66.9 GB) · 4.5 GB over · band crosses the card"
        in text
    )
    assert "✓" not in text and "✗" not in text
    assert "Fewest GPUs: 1× a100-80gb-sxm (no sharding)" in text
    assert "On one card: a100-80gb-sxm, b200, h100-sxm, h200-sxm" in text
    assert "fits · fsdp peak 30.0 GB (21.0 GB–38.2 GB) · 18.0 GB free" in text  # two L40S hold it
    # Ranked by cost per checkpoint with hours, run cost and warnings.
    ranking = html[
        html.index('<table id="ranking"') : html.index("</table>", html.index('<table id="ranking"'))
    ]
    assert ranking.count("<tr>") == 8  # header + 7 offers
    assert re.search(r"\$2\.98.*<strong>spot</strong> preemptible", ranking, re.S)
    assert "wall 16.0 h" in ranking  # compute 14 h plus start-up and rework
    assert "14.0 h" in ranking and "$24.50" in ranking
    svgs = [a for tag, a in parsed.tags if tag == "svg"]
    assert len(svgs) >= 4  # memory, cost/time, price histories (h100, a100, b200)
    ids = [a["id"] for _, a in parsed.tags if "id" in a]
    assert len(ids) == len(set(ids)), "inline SVG ids must be unique on the page"
    assert "Data used" in text and "2026-11-02 06:00 UTC" in text and "archive" in text


@pytest.mark.slow
def test_markdown_report_of_a_multi_gpu_workload(written: dict[str, Path]) -> None:
    text = written["llama-3.1-8b-full.md"].read_text()
    assert (
        "| l40s | 48.0 GB | offload only | does not fit (80.0 GB, 65.6 GB–110.5 GB) "
        "| tight · zero3 (45.0 GB, 36.9 GB–62.2 GB; band crosses the card) | does not fit |"
    ) in text
    # 150 GB on a 180 GB card: the peak fits, the 20 % margin (36 GB) does not -> tight, shown
    # before the CPU-offload fit (tight setups are ranked, offload ones are not).
    assert (
        "| b200 | 180.0 GB | tight · no sharding (150.0 GB, 123.0 GB–207.2 GB; band crosses the card) |"
        in text
    )
    assert "Cells: fits (at least the planning margin free), tight" in text and "-18%/+38%" in text
    assert "v100" not in text.split("## Top offers")[0]  # swept, but nobody offers it this week
    assert "Fewest GPUs: 2× h200-sxm (zero3)" in text
    # Total cost and cost per checkpoint first, then GPU time, start-up, rework, other, wall time.
    assert (
        "| 1 | lambda | 8× b200 | on-demand | $4.99 | $504.79 | $331.01–$952.69 | $50.48 | $479.04 | $23.95 | $0.00 "
        "| $1.80 | 12.6 h |" in text
    )
    assert (
        "| 3 | coreweave | 8× h200-sxm | on-demand | $6.31 | $1,041.69 | $742.02–$1,552.57 | $104.17 | $1,009.60 "
        "| $30.29 |" in text
    )


@pytest.mark.slow
def test_markdown_is_well_formed_tables(written: dict[str, Path]) -> None:
    for name in ("summary.md", "llama-3.1-70b-qlora.md", "llama-3.1-8b-full.md"):
        rendered = markdown_html(written[name].read_text())
        for table in re.findall(r"<table>.*?</table>", rendered, re.S):
            header_cells = len(re.findall(r"<th[ >]", table.split("</thead>")[0]))
            for row in re.findall(r"<tr>(.*?)</tr>", table.split("</thead>")[1], re.S):
                assert len(re.findall(r"<td", row)) == header_cells, (name, row)
        assert len(re.findall(r"<table>", rendered)) >= 3, name


# ---------------------------------------------------------------------------- escaping


HOSTILE = (SCRIPT, IMG)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["index.html", "llama-3.1-70b-qlora.html", "llama-3.1-8b-full.html"])
def test_hostile_strings_are_text_in_html_and_svg(written: dict[str, Path], name: str) -> None:
    html = written[name].read_text()
    for hostile in HOSTILE:
        assert hostile not in html
    tags = elements(html).tags
    assert not [t for t, _ in tags if t in ("script", "img", "iframe", "object", "embed")]
    assert not [(t, k) for t, attrs in tags for k in attrs if k.startswith("on")]
    if name != "llama-3.1-8b-full.html":  # that workload's offers do not involve the hostile provider
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    if name == "llama-3.1-70b-qlora.html":
        svg_text = " ".join(re.findall(r"<svg.*?</svg>", html, re.S))
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg_text  # chart legends escape it too


@pytest.mark.slow
@pytest.mark.parametrize("name", ["summary.md", "llama-3.1-70b-qlora.md"])
def test_hostile_strings_are_text_in_markdown(written: dict[str, Path], name: str) -> None:
    text = written[name].read_text()
    for hostile in HOSTILE:
        assert hostile not in text
    rendered = markdown_html(text)
    assert "<script" not in rendered and "<img" not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered  # an entity: displayed as text, never a tag


def test_matplotlib_escapes_chart_text_and_inline_check_rejects_live_markup() -> None:
    from matplotlib.figure import Figure

    from gpuprice.reports.svg import UnsafeSvg, assert_inert, chart_text, figure_to_svg

    fig = Figure(figsize=(3, 2))
    ax = fig.subplots()
    ax.plot([1, 2], [1, 2], label=chart_text(IMG))
    ax.set_title(chart_text(SCRIPT + " costs $5 and $6"))  # `$...$` must not become mathtext
    ax.legend()
    svg = str(figure_to_svg(fig, title=SCRIPT, chart_id="t"))
    assert svg.startswith("<svg") and "<?xml" not in svg and "DOCTYPE" not in svg
    assert SCRIPT not in svg and "<img" not in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt; costs $5 and $6" in svg
    assert 'aria-label="&lt;script&gt;' in svg
    with pytest.raises(UnsafeSvg):
        assert_inert('<svg><g onload="alert(1)"></g></svg>')
    with pytest.raises(UnsafeSvg):
        assert_inert("<svg><script>alert(1)</script></svg>")


def test_unsafe_workload_names_become_safe_file_names() -> None:
    assert safe_filename("../../etc/passwd") == "etc-passwd"
    assert safe_filename('<script>"x"') == "script-x"
    assert safe_filename("llama-3.1-70b-qlora") == "llama-3.1-70b-qlora"


# ---------------------------------------------------------------------------- self-contained


@pytest.mark.slow
@pytest.mark.parametrize("name", ["index.html", "llama-3.1-70b-qlora.html", "llama-3.1-8b-full.html"])
def test_html_is_self_contained(written: dict[str, Path], name: str) -> None:
    html = written[name].read_text()
    allowed = {pricing_url(p) for p in PROVIDERS}
    assert None not in allowed
    for tag, attrs in elements(html).tags:
        assert tag not in ("link", "script"), tag
        for key in ("src", "href", "xlink:href", "srcset", "action", "data"):
            value = attrs.get(key) or ""
            if re.match(r"\s*(https?:)?//", value):
                assert tag == "a" and key == "href" and value in allowed, (tag, key, value)
            assert not value.lower().startswith(("javascript:", "data:")), value
    assert "@import" not in html and not re.search(r"url\(\s*['\"]?(https?:)?//", html)
    assert "@media print" in html


def test_pricing_links_come_from_provider_parsers() -> None:
    from gpuprice.scrapers.registry import provider_parser

    url = provider_parser("runpod").PRICING_URL
    assert pricing_url("runpod") == url == "https://www.runpod.io/pricing"
    assert pricing_url(SCRIPT) is None


# ---------------------------------------------------------------------------- CLI


@pytest.fixture
def published(home: Path, warehouse: Path) -> Path:
    target = home / "analytics.duckdb"
    shutil.copyfile(warehouse, target)
    return target


@pytest.mark.slow
def test_cli_report_writes_the_week_and_prints_paths(cli, published: Path, home: Path) -> None:
    result = cli("report", "--week", "2026-W43")
    assert result.code == 0, result.err
    paths = [Path(line) for line in result.out.splitlines()]
    assert paths[0] == home / "reports" / "2026-W43" / "index.html"
    from gpuprice.models.workloads import load_workloads

    assert all(p.exists() for p in paths) and len(paths) == 2 + 2 * len(load_workloads())  # html + md each
    index = paths[0].read_text()
    assert "2026-10-19 to 2026-10-25" in index and "2026-W43" in index
    assert "-7.4 %" in index  # runpod H100 2.69 -> 2.49 on 2026-10-20, the only move that week


@pytest.mark.slow
def test_cli_report_single_workload(cli, published: Path, home: Path) -> None:
    result = cli("report", "--workload", "llama-3.1-8b-full")
    assert result.code == 0, result.err
    names = [Path(line).name for line in result.out.splitlines()]
    assert names == ["index.html", "summary.md", "llama-3.1-8b-full.html", "llama-3.1-8b-full.md"]
    index = (home / "reports" / WEEK / "index.html").read_text()
    assert 'href="llama-3.1-8b-full.html"' in index and 'href="llama-3.1-70b-qlora.html"' not in index
    assert "llama-3.1-70b-qlora" in index  # still summarised, just not linked until its page exists


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--week", "2026-44"), "'2026-44'"),
        (("--week", "2026-W54"), "'2026-W54'"),
        (("--week", "2020-W10"), "2020-W10"),
        (("--workload", "llama-3.1-70b-qlor"), "llama-3.1-70b-qlora"),
    ],
)
def test_cli_report_bad_input_exits_2_with_one_line(cli, published: Path, args, needle: str) -> None:
    result = cli("report", *args)
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in result.err


def test_cli_report_without_warehouse(cli, home: Path) -> None:
    result = cli("report")
    assert result.code == 2 and "gpuprice run" in result.err and len(result.err.strip().splitlines()) == 1


def test_reports_warn_when_the_pipeline_stopped(con) -> None:
    """A week after the newest snapshot shows the last prices, with an unmissable warning."""
    from gpuprice.reports import build, pages

    later = dt.datetime(2026, 11, 10, 6, 0, tzinfo=dt.UTC)
    overview, _ = build.build_week(con, IsoWeek.parse("2026-W45"), generated_at=later, catalog={})
    assert overview.meta.as_of == dt.date(2026, 10, 30) and overview.meta.lag_days == 9
    stopped = "The newest prices are from 2026-10-30, 9 days before the end of this week (2026-11-08)"
    index = pages.render_index(overview, {})
    assert stopped in index and 'class="callout" id="status"' in index
    assert stopped in pages.render_summary(overview, index_path="reports/2026-W45/index.html")
    # Freshness is judged on the same day the age is: one statement, never "fresh" beside "old".
    assert "providers were stale on 2026-10-30" in index and "Old data" not in index
    # Mid-week, Friday's data is judged against Saturday, not against the coming Sunday.
    saturday = dt.datetime(2026, 10, 31, 9, 0, tzinfo=dt.UTC)
    current, _ = build.build_week(con, IsoWeek.parse(WEEK), generated_at=saturday, catalog={})
    assert current.meta.lag_days == 1 and "The newest prices are from" not in pages.render_index(current, {})


def test_memory_bars_come_from_the_memory_model(con) -> None:
    from gpuprice.reports import build
    from gpuprice.reports.memory_verdict import MEMORY_PARTS

    _, reports = build.build_week(con, IsoWeek.parse(WEEK), generated_at=NOW, catalog=catalog())
    qlora = next(r for r in reports if r.definition.name == "llama-3.1-70b-qlora")
    bars = {bar.label: bar for bar in qlora.memory.bars}
    assert list(bars) == ["1 GPU", "2 GPUs · fsdp", "8 GPUs · fsdp"]
    one = bars["1 GPU"]
    assert set(one.parts) == set(MEMORY_PARTS) and qlora.memory.breakdown_note is None
    assert 30 < one.parts["weights"] < 50  # 70B parameters at 4 bits (the guide's 35 GB plus quant constants)
    assert one.planning_gb == pytest.approx(one.total / (1 - 0.2), rel=1e-3)  # 20 % of the card kept free
    assert bars["8 GPUs · fsdp"].parts["weights"] < one.parts["weights"] / 4  # sharded across 8


@pytest.mark.slow
def test_workloads_missing_on_either_side(con) -> None:
    """Output for a workload the catalog dropped, and a catalog workload without any output."""
    from gpuprice.reports import build, pages

    only = {name: w for name, w in catalog().items() if name != "llama-3.1-8b-full"}
    overview, reports = build.build_week(con, IsoWeek.parse(WEEK), generated_at=NOW, catalog=only)
    retired = next(r for r in reports if r.definition.name == "llama-3.1-8b-full")
    assert not retired.definition.in_catalog and retired.memory.breakdown_note
    assert "no longer in the workload catalog" in pages.render_workload_md(retired, "x.html")
    assert "llama-3.1-8b-full" in pages.render_workload_html(retired)
    summary = pages.render_summary(overview, index_path="i.html")
    assert "| budget-lora-experiment | no model output yet |" in summary


def test_memory_verdict_semantics() -> None:
    """Per cell: a GPU-memory fit beats CPU offload beats a miss; misses show the nearest need."""
    from gpuprice.reports.memory_verdict import MemoryFitRow, MemoryVerdict

    def row(
        gpu: str, memory: float, count: int, sharding: str, need: float, least: bool = False
    ) -> MemoryFitRow:
        return MemoryFitRow(
            gpu=gpu,
            gpu_count=count,
            sharding=sharding,
            per_gpu_gb=need / 1.2,
            planning_gb=need,
            gpu_memory_gb=memory,
            fits=need <= memory,
            headroom_gb=memory - need,
            least_complex=least,
        )

    verdict = MemoryVerdict(
        rows=[
            row("l4", 24, 1, "none", 90),
            row("l4", 24, 1, "offload", 20),
            row("l4", 24, 8, "zero2", 30),
            row("l4", 24, 8, "zero3", 26),
            row("h100-sxm", 80, 1, "none", 90),
            row("h100-sxm", 80, 2, "zero2", 70, least=True),
            row("h100-sxm", 80, 2, "zero3", 50),
            row("h100-sxm", 80, 16, "zero3", 10),
            row("v100", 32, 1, "none", 30),
        ],
        offered_gpus=["l4", "h100-sxm"],
    )
    assert verdict.counts == [1, 2, 8] and verdict.omitted_gpu_types == 1
    l4, h100 = verdict.matrix
    assert [c.sharding if c else None for c in l4.cells] == ["offload", None, "zero3"]  # nearest miss at 8
    assert l4.fewest is None and verdict.offload_only_gpu_types == ["l4"]
    assert [c.sharding if c else None for c in h100.cells] == ["none", "zero2", None]  # least-complex fit
    assert h100.fewest.gpu_count == 2 and verdict.smallest.gpu == "h100-sxm"
    assert verdict.fitting_gpu_types == ["h100-sxm"] and verdict.single_gpu_types == []


def test_compiled_templates_are_reused_and_follow_edits_to_the_source(tmp_path: Path) -> None:
    from jinja2 import DictLoader, Environment

    from gpuprice.reports.pages import CompiledTemplateCache

    sources = {"page.j2": "price {{ value }}"}

    def render() -> str:
        env = Environment(loader=DictLoader(sources), bytecode_cache=CompiledTemplateCache(str(tmp_path)))
        return env.get_template("page.j2").render(value=3)

    assert render() == "price 3"
    cached = list(tmp_path.iterdir())
    assert len(cached) == 1  # compiled once, kept
    assert render() == "price 3"
    sources["page.j2"] = "cost {{ value }}"
    assert render() == "cost 3"  # the checksum changed: recompiled, not the stale code


def test_a_template_cache_that_cannot_be_written_only_costs_the_compile(tmp_path: Path) -> None:
    from jinja2 import DictLoader, Environment

    from gpuprice.reports.pages import CompiledTemplateCache

    gone = tmp_path / "removed"
    cache = CompiledTemplateCache(str(gone))  # its folder vanishes: every write fails
    env = Environment(loader=DictLoader({"page.j2": "{{ 1 + 1 }}"}), bytecode_cache=cache)
    assert env.get_template("page.j2").render() == "2"


@pytest.mark.slow
def test_rankings_show_the_throughput_band_as_stored(written: dict[str, Path], con) -> None:
    """Every ranked offer's total-cost range in the reports is the one the ranking stored
    (hours_low/high, total_cost_low/high_usd: models/throughput_band.py's rule), with the note
    saying what it rests on; the answer line leads with it."""
    from gpuprice.reports import formatting as fmt

    text = written["llama-3.1-8b-full.md"].read_text()
    stored = con.execute(
        "SELECT rank, coalesce(total_cost_usd, json_extract(cost_terms, '$.total_usd')::DOUBLE), "
        "total_cost_low_usd, total_cost_high_usd FROM workload_rankings "
        "WHERE workload = 'llama-3.1-8b-full' ORDER BY rank"
    ).fetchall()
    assert stored and "| Total cost | Range | Per checkpoint |" in text
    for rank, total, low, high in stored:
        assert low < total < high
        assert f"| {rank} |" in text and f"| {fmt.usd(total)} | {fmt.usd_range(low, high)} |" in text
    answer = next(line for line in text.splitlines() if line.startswith("**Recommended"))
    assert "over the throughput band" in answer
    from gpuprice.models.throughput_band import BAND_PATH

    full_runs = json.loads(BAND_PATH.read_text())["bands"]["full"]["runs"]
    assert (
        f"Range: the total cost at the ends of the throughput error band: 90% of {full_runs} measured full runs"
        in text
    )
