"""Multi-request sources: paged and per-region fetches stored as one combined page, live path."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import httpx
import pytest
from test_fetch import TODAY, Site, make_fetcher

from gpuprice.scrapers.collect import collect_page
from gpuprice.scrapers.fetch import FetchError
from gpuprice.scrapers.multipage import COMBINED_FORMAT, page_bodies
from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.rawstore import read_raw
from gpuprice.scrapers.registry import parse_page

AZ = "https://prices.azure.com/api/retail/prices"


def _item(price: float, region: str) -> dict:
    return {
        "armSkuName": "Standard_ND96isr_H100_v5",
        "armRegionName": region,
        "meterName": "ND96isr H100 v5",
        "productName": "Virtual Machines NDsr H100 v5 Series",
        "type": "Consumption",
        "unitOfMeasure": "1 Hour",
        "currencyCode": "USD",
        "retailPrice": price,
    }


def test_azure_follows_next_page_links_into_one_stored_page(tmp_path: Path) -> None:
    site = Site()
    site.on(AZ, lambda req: _page(req))
    fetcher = make_fetcher(site)

    def _page(req: httpx.Request) -> httpx.Response:
        skip = int(req.url.params.get("$skip", "0"))
        link = f"{AZ}?$skip={skip + 1}" if skip < 2 else None
        return httpx.Response(
            200, json={"Items": [_item(90.0 + skip, f"region{skip}")], "NextPageLink": link}
        )

    page = collect_page("azure", TODAY, source="live", home=tmp_path, fetcher=fetcher, today=TODAY)
    assert [r.url.params.get("$skip") for r in site.hits("/api/retail/prices")] == [None, "1", "2"]
    stored = json.loads(read_raw(page.raw.stored_path))
    assert stored["format"] == COMBINED_FORMAT and len(stored["pages"]) == 3
    assert page.kind == "json" and page.raw.http_status == 200
    offers = parse_page("azure", page.body).offers
    assert [(o.region, o.usd_per_instance_hour) for o in offers] == [
        ("region0", 90.0),
        ("region1", 91.0),
        ("region2", 92.0),
    ]


def test_paging_stops_at_the_cap_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuprice.scrapers.providers import azure

    monkeypatch.setattr(azure, "MAX_PAGES", 2)
    site = Site()
    counter = iter(range(100))
    site.on(
        AZ,
        lambda _req: httpx.Response(200, json={"Items": [], "NextPageLink": f"{AZ}?$skip={next(counter)}"}),
    )
    page = collect_page("azure", TODAY, source="live", home=tmp_path, fetcher=make_fetcher(site), today=TODAY)
    assert len(site.hits("/api/retail/prices")) == 2
    _arrived, failed = page_bodies(json.loads(page.body))
    assert len(failed) == 1 and "page cap reached (2 pages)" in failed[0]


def test_an_optional_part_may_fail_a_required_one_may_not(tmp_path: Path) -> None:
    site = Site()
    site.on("https://a.test/od.json", httpx.Response(200, json={"regions": {}}))
    site.on("https://a.test/spot.json", httpx.Response(404))
    fetcher = make_fetcher(site, max_attempts=1)
    ok = [
        PageRequest(url="https://a.test/od.json", kind="json", combine=True),
        PageRequest(url="https://a.test/spot.json", kind="json", combine=True, optional=True),
    ]
    page = collect_page("aws", TODAY, source="live", home=tmp_path, fetcher=fetcher, today=TODAY, requests=ok)
    arrived, failed = page_bodies(json.loads(page.body))
    assert [url for url, _ in arrived] == ["https://a.test/od.json"]
    assert failed == ["https://a.test/spot.json: HTTP 404 Not Found"]
    required = [r.model_copy(update={"optional": False}) for r in ok]
    with pytest.raises(
        FetchError,
        match=r"aws: cannot fetch https://a.test/od.json: https://a.test/spot.json: HTTP 404 Not Found$",
    ):
        collect_page(
            "aws", TODAY, source="live", home=tmp_path, fetcher=fetcher, today=TODAY, requests=required
        )


def test_the_archive_replays_a_combined_page_as_one_file(tmp_path: Path) -> None:
    page = collect_page("aws", dt.date(2026, 10, 6), source="archive", home=tmp_path)
    assert page.page_date == dt.date(2026, 1, 21) and page.kind == "json"
    assert len(parse_page("aws", page.body).offers) == 12


def test_a_failed_required_part_spares_the_site_the_rest(tmp_path: Path) -> None:
    site = Site()
    site.on("https://a.test/eu.json", httpx.Response(404))
    site.on("https://a.test/us.json", httpx.Response(200, json={"regions": {}}))
    requests = [
        PageRequest(url="https://a.test/eu.json", kind="json", combine=True),
        PageRequest(url="https://a.test/us.json", kind="json", combine=True),
    ]
    with pytest.raises(FetchError, match=r"^aws: cannot fetch https://a.test/eu.json: HTTP 404 Not Found$"):
        collect_page(
            "aws",
            TODAY,
            source="live",
            home=tmp_path,
            fetcher=make_fetcher(site),
            today=TODAY,
            requests=requests,
        )
    assert site.hits("/us.json") == []


def test_a_combined_page_keeps_each_body_byte_for_byte(tmp_path: Path) -> None:
    """Vast.ai's searches (and every multi-request source) are stored as the site sent them: the
    key order, spacing, number spelling and escapes of each JSON body, and a body that is not
    UTF-8; the parser still reads the parsed bodies."""
    import base64

    from gpuprice.scrapers.multipage import combined_parts

    search = (
        b'{"offers": [ {"id":1, "gpu_name":"RTX 4090","num_gpus":1, "dph_total":0.40000,'
        b' "geolocation":"Qu\\u00e9bec, CA", "min_bid": 1.5e-1}\n]}\r\n'
    )
    odd = b'{"offers": [], "note": "\xff not utf-8"}'
    site = Site()
    site.on("https://a.test/search", httpx.Response(200, content=search))
    site.on("https://a.test/odd", httpx.Response(200, content=odd))
    requests = [
        PageRequest(url="https://a.test/search", kind="json", combine=True),
        PageRequest(url="https://a.test/odd", kind="json", combine=True, optional=True),
    ]
    page = collect_page(
        "vastai",
        TODAY,
        source="live",
        home=tmp_path,
        fetcher=make_fetcher(site),
        today=TODAY,
        requests=requests,
    )
    stored = json.loads(read_raw(page.raw.stored_path))
    assert stored["format"] == COMBINED_FORMAT
    assert stored["pages"][0]["text"].encode("utf-8") == search  # not re-serialised
    assert base64.b64decode(stored["pages"][1]["base64"]) == odd
    parts = combined_parts(stored)
    assert parts is not None and [p.raw for p in parts] == [search, odd]
    assert parts[0].body["offers"][0]["geolocation"] == "Québec, CA"  # readers get the parsed body
    arrived, failed = page_bodies(stored)
    assert failed == [] and arrived[0] == ("https://a.test/search", json.loads(search))


def test_version_1_combined_documents_are_still_read() -> None:
    from gpuprice.scrapers.multipage import combined_parts

    old = {"format": "gpuprice-combined/1", "pages": [{"url": "u", "status": 200, "body": {"a": 1}}]}
    parts = combined_parts(old)
    assert parts is not None and parts[0].body == {"a": 1} and parts[0].raw is None
