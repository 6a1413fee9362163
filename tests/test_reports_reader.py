"""Reports as a reader sees them: the answer first, one consistent story per page, no internal
keys or local paths, and one page for a week without scraped data."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest_reports import NOW, OFFERS, build_warehouse, catalog

from gpuprice.reports.render import render_weekly_reports


class _Text(HTMLParser):
    """Visible text (no CSS or SVG) and each table's rows as lists of cell texts, by table id/class."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tables: list[list[list[str]]] = []
        self._skip = 0
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "svg"):
            self._skip += 1
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("style", "svg"):
            self._skip -= 1
        elif tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        if self._skip:
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def parsed(path: Path) -> _Text:
    parser = _Text()
    parser.feed(path.read_text())
    return parser


def visible(path: Path) -> str:
    return " ".join(" ".join(parsed(path).text).split())


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    root = tmp_path_factory.mktemp("reader")
    warehouse = build_warehouse(root / "warehouse.duckdb")
    paths = render_weekly_reports(
        None, analytics_file=warehouse, out_root=root / "reports", generated_at=NOW, catalog=catalog()
    )
    return warehouse, {p.name: p for p in paths}


def _offers_by_provider(table: list[list[str]], provider_col: int, offers_col: int) -> dict[str, str]:
    return {row[provider_col]: row[offers_col] for row in table[1:] if len(row) > offers_col}


def test_offer_counts_agree_between_sections(week) -> None:
    _, pages = week
    for name in ("index.html", "llama-3.1-70b-qlora.html"):
        tables = parsed(pages[name]).tables
        sources = next(t for t in tables if t[0][:3] == ["Provider", "Current snapshot", "Offers"])
        in_sources = _offers_by_provider(sources, 0, 2)
        assert in_sources["runpod"] == "5"  # the current offers, not every row of the day
        if name == "index.html":
            fresh = next(t for t in tables if t[0][:2] == ["Provider", "Last successful scrape"])
            in_freshness = _offers_by_provider(fresh, 0, 5)
            assert {p: n for p, n in in_freshness.items() if n != "—"} == {
                p: n for p, n in in_sources.items() if p in in_freshness and in_freshness[p] != "—"
            }


def test_readers_never_see_sku_keys_or_local_paths(week) -> None:
    warehouse, pages = week
    skus = {offer[1] for offer in OFFERS if offer[1] != offer[3]} - {"H100 SXM", "L40S"}
    for path in pages.values():
        text = path.read_text()
        assert str(warehouse.parent) not in text and "/tmp/" not in text, path.name
        for sku in ("gpu_8x_h100_sxm5", "gpu_1x_h100_sxm5", "gpu_8x_b200"):
            assert sku not in text, (path.name, sku)
        assert skus  # the fixture does carry SKU keys that differ from GPU names


def test_spacing_between_sentences_and_qualifiers(week) -> None:
    _, pages = week
    for name, path in pages.items():
        text = visible(path) if name.endswith(".html") else " ".join(path.read_text().split())
        assert not re.search(r"[a-z]\.[A-Z][a-z]", text), (name, re.findall(r"\S*[a-z]\.[A-Z][a-z]\S*", text))
        assert not re.search(r"[a-z]\((community|spot|lowest)", text), name


def test_index_and_workload_pages_lead_with_the_answer(week) -> None:
    _, pages = week
    index = visible(pages["index.html"])
    assert index.index("Best offer per workload") < min(
        index.index(s) for s in ("Price changes this week", "Cheapest offer per GPU type", "Data freshness")
    )
    page = visible(pages["llama-3.1-70b-qlora.html"])
    first = page.split("llama-3.1-70b-qlora", 2)[2]  # after the title and the heading
    assert first.lstrip().startswith(
        "Recommended: runpod · 1× h100-sxm · spot — $29.80 total ($25.58–$51.09 over the throughput band), $2.98"
    )
    order = [
        "Why this offer",
        "Alternatives: offers by cost per successful checkpoint",
        "GPU types on offer hold this workload",  # the memory verdict
        "Price history of the relevant GPU types",
        "Workload and assumptions",
    ]
    assert [page.index(s) for s in order] == sorted(page.index(s) for s in order)


def test_status_is_one_story(week) -> None:
    _, pages = week
    for name, path in pages.items():
        if name.endswith(".html"):
            text = visible(path)
            assert "6 of 11 providers were stale on 2026-10-30" in text, name
            assert "providers fresh" not in text and "Old data" not in text, name


def test_a_week_without_scraped_data_is_one_page(cli, home, week) -> None:
    import shutil

    warehouse, _ = week
    shutil.copy(warehouse, home / "analytics.duckdb")
    result = cli("report", "--week", "2026-W36")  # only an imported public report by then
    assert result.code == 0, result.err
    paths = [Path(line) for line in result.out.splitlines()]
    assert paths == [home / "reports" / "2026-W36" / "index.html"]
    text = visible(paths[0])
    assert "No scraped data for week 2026-W36" in text and "2026-10-12" in text  # first scrape
    assert "no offer fits" not in text.lower()


def test_markdown_keeps_the_space_before_a_qualifier(week) -> None:
    """Markdown cells are stripped: "runpod (community)" must not become "runpod(community)"."""
    from gpuprice.reports import build, pages
    from gpuprice.reports.weeks import IsoWeek
    from gpuprice.warehouse.connection import connect_reader

    warehouse, _ = week
    con = connect_reader(warehouse)
    try:
        overview, _ = build.build_week(con, IsoWeek.parse("2026-W43"), generated_at=NOW, catalog={})
    finally:
        con.close()
    summary = pages.render_summary(overview, index_path="reports/2026-W43/index.html")
    assert "| h100-sxm | $2.39 | runpod (community) |" in summary
    assert "runpod(community)" not in summary
