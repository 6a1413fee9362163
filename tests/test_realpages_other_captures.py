"""The parsers on structures seen in real captures other than the ones in ``../shared/realpages``.

Public trackers keep other captures of the same providers (other dates, whole pages where the shared
folder holds an excerpt, other field subsets). Each test here reads the project's own fixture or
inline page written in the structure of one such capture (the capture itself is never copied into
the repository; its repository, path and commit are cited), with rows cut down and, for HTML,
prices invented; the expected offers are written out from reading the fixture.
"""

from __future__ import annotations

import datetime as dt

from test_realpages_html import _nb, assert_contract_offers

from gpuprice.scrapers.registry import parse_page
from parser_support import fixture_dir


def test_nebius_server_rendered_tables_with_head_and_body_sections() -> None:
    """ewyluda/gpu-price-index tests/fixtures/nebius.html @eb72cc64cd20f355b6bd70e33bfa9a6472236f7a:
    each table's header row sits in a ``pc-highlight-table-block__head`` section and its data rows
    in a ``__body`` section. The body's first row (GB300, "Contact us") is data, not the header:
    before the fix the page exited 3 ("GPU table without name and price columns (headers: NVIDIA
    GB300 NVL72 | 112 | 800 | Contact us | Contact us)")."""
    page = (fixture_dir("nebius") / "server_rendered_head_body_sections.html").read_bytes()
    result = parse_page("nebius", page, observed_on=dt.date(2026, 9, 1))
    scheduled = "2026-10-01"
    assert_contract_offers(
        result,
        [
            _nb("b300", "NVIDIA HGX B300", 8, "on_demand", 7.7),
            _nb("b300", "NVIDIA HGX B300", 8, "on_demand", 9.2, effective_from=scheduled),
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "on_demand", 3.75),
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "on_demand", 4.4, effective_from=scheduled),
            _nb("l40s", "NVIDIA L40S with Intel CPU", 1, "on_demand", 1.5, "from"),
            _nb("l40s", "NVIDIA L40S with Intel CPU", 1, "on_demand", 1.5, "from", effective_from=scheduled),
            _nb("h100-sxm", "NVIDIA HGX H100", 8, "spot", 0.75, "from"),  # the preemptible table
            _nb("l40s", "NVIDIA L40S with Intel CPU", 1, "spot", 0.7, "from"),  # "from $0.70**"
        ],
    )
    report = result.report
    assert report.unpriced_rows == 1 and report.rejected == [] and report.unknown_gpus == []
