"""Open the written reports in headless Chromium: charts render, the ranking table is there,
the console stays clean, the layout holds (the answer within the first 900 px, no two chart
labels overlapping), and screenshots of the index and two workload pages land in
$GPUPRICE_ARTIFACTS or tests/artifacts/ (paths printed) for a human to look at."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest_reports import NOW, SCRIPT, WEEK, build_warehouse, catalog

pytestmark = pytest.mark.browser

ARTIFACTS = Path(os.environ.get("GPUPRICE_ARTIFACTS") or Path(__file__).resolve().parent / "artifacts")
FOLD_PX = 900  # the answer must be visible without scrolling on a 1366x900 screen
CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1366,900",
)


def _chromium() -> tuple[str, str] | None:
    browser = next(
        (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None
    )
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gpuprice.reports.render import render_weekly_reports

    root = tmp_path_factory.mktemp("browser")
    warehouse = build_warehouse(root / "warehouse.duckdb")
    render_weekly_reports(
        WEEK, analytics_file=warehouse, out_root=root / "reports", generated_at=NOW, catalog=catalog()
    )
    return root / "reports" / WEEK


@pytest.fixture(scope="module")
def driver():
    found = _chromium()
    if found is None:
        pytest.skip("chromium and chromedriver not installed (apt-get install chromium chromium-driver)")
    pytest.importorskip("selenium", reason="selenium not installed (pip install -e '.[dev]')")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, chromedriver = found
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="gpuprice-chrome-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    session = webdriver.Chrome(service=Service(chromedriver), options=options)
    session.set_page_load_timeout(30)
    try:
        yield session
    finally:
        session.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _open(driver, page: Path) -> None:
    driver.get_log("browser")  # drop entries from earlier pages
    driver.get(page.as_uri())


def _visible_charts(driver) -> list:
    charts = driver.find_elements("css selector", "svg.chart")
    return [c for c in charts if c.size["width"] > 50 and c.size["height"] > 50]


def _severe(driver) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def _full_page_screenshot(driver, target: Path) -> None:
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1366, min(max(900, height + 40), 9000))
    target.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(target))
    driver.set_window_size(1366, 900)
    print(f"screenshot: {target}")


# Every text box of every chart, per chart, in page pixels (what the reader sees, fonts included).
_CHART_TEXT_BOXES = """
return Array.from(document.querySelectorAll('svg.chart')).map(svg =>
  Array.from(svg.querySelectorAll('text')).map(t => {
    const r = t.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom, t.textContent];
  }).filter(b => b[2] - b[0] > 0.5 && b[3] - b[1] > 0.5 && b[4].trim() !== ''));
"""


def _overlaps(boxes: list, slack: float = 1.0) -> list[tuple[str, str]]:
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if min(a[2], b[2]) - max(a[0], b[0]) > slack and min(a[3], b[3]) - max(a[1], b[1]) > slack:
                found.append((a[4], b[4]))
    return found


def _assert_layout(driver) -> None:
    """The answer sits above the fold, and no two text boxes of one chart overlap."""
    answer = driver.find_element("css selector", "#answer")
    top = driver.execute_script("return arguments[0].getBoundingClientRect().top + window.scrollY", answer)
    assert answer.is_displayed() and top + 20 < FOLD_PX, top
    for index, boxes in enumerate(driver.execute_script(_CHART_TEXT_BOXES)):
        assert _overlaps(boxes) == [], (index, _overlaps(boxes))


def test_index_renders_in_chromium(driver, report_dir: Path) -> None:
    _open(driver, report_dir / "index.html")
    assert WEEK in driver.title
    tables = driver.find_elements("css selector", "table")
    assert len(tables) >= 3  # freshness, changes, cheapest (+ sources)
    body = driver.find_element("tag name", "body").text
    assert SCRIPT in body  # the hostile provider shows as text, never as an element
    assert driver.execute_script("return document.querySelectorAll('script, img, iframe').length") == 0
    links = driver.find_elements("css selector", "section#workloads a[href$='.html']")
    assert {link.get_attribute("href").rsplit("/", 1)[-1] for link in links} >= {
        "llama-3.1-70b-qlora.html",
        "llama-3.1-8b-full.html",
    }
    assert _severe(driver) == []
    _assert_layout(driver)
    first_row = driver.find_element("css selector", "table#answer tbody tr")
    assert driver.execute_script("return arguments[0].getBoundingClientRect().bottom", first_row) < FOLD_PX
    _full_page_screenshot(driver, ARTIFACTS / "report_index.png")


def test_workload_report_renders_in_chromium(driver, report_dir: Path) -> None:
    _open(driver, report_dir / "llama-3.1-70b-qlora.html")
    charts = _visible_charts(driver)
    # memory breakdown, cost/time scatter, and at least one price-history chart
    assert len(charts) >= 3, [c.size for c in driver.find_elements("css selector", "svg.chart")]
    ranking = driver.find_element("css selector", "table#ranking")
    rows = ranking.find_elements("css selector", "tbody tr")
    assert len(rows) == 7
    assert rows[0].find_elements("css selector", "td")[0].text == "1"
    # Hostile strings render as visible text, in table cells and inside the SVG charts.
    assert SCRIPT in ranking.text
    assert driver.execute_script("return document.querySelectorAll('script, img, iframe').length") == 0
    svg_text = " ".join(
        t.get_attribute("textContent") for t in driver.find_elements("css selector", "svg.chart text")
    )
    assert SCRIPT in svg_text
    assert _severe(driver) == []
    _assert_layout(driver)
    assert driver.find_element("css selector", "#answer").text.startswith("Recommended: runpod")
    _full_page_screenshot(driver, ARTIFACTS / "report_workload.png")


def test_second_workload_page_layout(driver, report_dir: Path) -> None:
    _open(driver, report_dir / "llama-3.1-8b-full.html")
    assert len(_visible_charts(driver)) >= 3
    _assert_layout(driver)
    assert _severe(driver) == []
    _full_page_screenshot(driver, ARTIFACTS / "report_workload_2.png")


def test_print_layout_keeps_charts(driver, report_dir: Path) -> None:
    """Printing (emulated print media) hides navigation but keeps every chart readable."""
    _open(driver, report_dir / "llama-3.1-70b-qlora.html")
    on_screen = len(_visible_charts(driver))
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        assert driver.find_element("css selector", "nav.toc").is_displayed() is False
        assert len(_visible_charts(driver)) == on_screen
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})


PHONE = (390, 844)  # a phone's CSS viewport (iPhone 12-15 class)
LEGIBLE_PX = 8.0  # the smallest chart text a reader can make out on a phone


def test_phone_width_shows_the_answer_row_by_row_and_legible_charts(driver, report_dir: Path) -> None:
    """At 390 px the index shows each workload's answer as its own card with every cell (cost per
    checkpoint, hours, warnings, price age) inside the screen, no sideways scroll; chart text keeps
    its drawn size (the chart scrolls instead of shrinking to ~5 px text)."""
    driver.set_window_size(*PHONE)
    try:
        _open(driver, report_dir / "index.html")
        width = driver.execute_script("return document.documentElement.clientWidth")
        assert width <= PHONE[0]
        answer = driver.find_element("css selector", "table#answer")
        assert driver.execute_script(
            "return arguments[0].scrollWidth <= arguments[0].clientWidth + 1", answer
        )
        rows = answer.find_elements("css selector", "tbody tr")
        assert rows
        labels = set()
        for row in rows:
            for cell in row.find_elements("css selector", "td"):
                box = driver.execute_script("return arguments[0].getBoundingClientRect().toJSON()", cell)
                assert cell.is_displayed() and box["left"] >= -1 and box["right"] <= width + 1, (
                    cell.text,
                    box,
                )
                labels.add(cell.get_attribute("data-label"))
        assert {"Per checkpoint", "Hours", "Warnings", "Price age"} <= labels
        # Cards stack: the second row starts below the first.
        if len(rows) > 1:
            tops = [
                driver.execute_script("return arguments[0].getBoundingClientRect().top", r) for r in rows[:2]
            ]
            assert tops[1] > tops[0] + 40
        assert _severe(driver) == []
        _full_page_screenshot_at(driver, ARTIFACTS / "report_index_phone.png", PHONE[0])

        _open(driver, report_dir / "llama-3.1-70b-qlora.html")
        heights = driver.execute_script(
            """return Array.from(document.querySelectorAll('svg.chart text'))
                 .map(t => t.getBoundingClientRect().height).filter(h => h > 0.5);"""
        )
        assert heights and min(heights) >= LEGIBLE_PX, sorted(heights)[:5]
        assert driver.find_element("css selector", "#answer").is_displayed()
        _full_page_screenshot_at(driver, ARTIFACTS / "report_workload_phone.png", PHONE[0])
    finally:
        driver.set_window_size(1366, 900)


def _full_page_screenshot_at(driver, target: Path, width: int) -> None:
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(max(800, height + 40), 9000))
    target.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(target))
    driver.set_window_size(width, PHONE[1])
    print(f"screenshot: {target}")
