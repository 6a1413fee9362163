"""Raw page store: layout, byte-exact gzip, idempotency, atomic writes, validated paths, the
validators index, and that RawPage is exactly a raw_pages row."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import os
from pathlib import Path

import duckdb
import pytest

from gpuprice.scrapers import rawstore
from gpuprice.scrapers.rawstore import (
    RawPage,
    RawStoreError,
    load_validators,
    lookup_validators,
    raw_page_path,
    read_raw,
    remember_validators,
    store_raw,
    validators_path,
)
from gpuprice.warehouse.schema import create_v1

DAY = dt.date(2026, 10, 12)
URL = "https://www.runpod.io/pricing"
BODY = b"<html><div class='gpu-pricing-row' data-secure='2.99'>H100 SXM</div></html>"


def test_layout_and_byte_exact_gzip(tmp_path: Path) -> None:
    page = store_raw(tmp_path, "runpod", DAY, URL, BODY, kind="html", http_status=200, etag='"abc"')
    digest = hashlib.sha256(BODY).hexdigest()
    expected = tmp_path.resolve() / "raw" / "runpod" / "2026-10-12" / f"{digest}.html.gz"
    assert Path(page.stored_path) == expected
    assert gzip.decompress(expected.read_bytes()) == BODY
    assert read_raw(expected) == BODY
    assert (page.sha256, page.bytes, page.http_status, page.etag) == (digest, len(BODY), 200, '"abc"')
    assert page.fetched_at.tzinfo is not None
    json_page = store_raw(
        tmp_path, "runpod", "2026-10-12", "https://api.runpod.io/graphql", b'{"data":{}}', kind="json"
    )
    assert json_page.stored_path.endswith(".json.gz") and json_page.snapshot_date == DAY


def test_raw_page_is_exactly_a_raw_pages_row(tmp_path: Path) -> None:
    con = duckdb.connect()
    create_v1(con)
    columns = [row[0] for row in con.execute("DESCRIBE raw_pages").fetchall()]
    assert list(RawPage.model_fields) == columns
    page = store_raw(
        tmp_path,
        "nebius",
        DAY,
        "https://nebius.com/prices",
        BODY,
        http_status=200,
        last_modified="Sun, 11 Oct 2026 00:00:00 GMT",
        parser_version="3",
    )
    values = page.model_dump()
    con.execute(
        f"INSERT INTO raw_pages VALUES ({', '.join('?' * len(columns))})", [values[c] for c in columns]
    )
    stored = con.execute("SELECT provider, sha256, bytes, snapshot_date FROM raw_pages").fetchone()
    assert stored == ("nebius", page.sha256, len(BODY), DAY)


def test_storing_the_same_body_twice_is_a_no_op(tmp_path: Path) -> None:
    first = store_raw(tmp_path, "lambda", DAY, URL, BODY)
    path = Path(first.stored_path)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    second = store_raw(tmp_path, "lambda", DAY, "https://lambda.ai/instances", BODY)
    assert second.stored_path == first.stored_path
    assert path.stat().st_mtime_ns == 1_000_000_000  # not rewritten
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temp files left
    other_day = store_raw(tmp_path, "lambda", DAY + dt.timedelta(days=1), URL, BODY)
    assert other_day.stored_path != first.stored_path and other_day.sha256 == first.sha256


def test_gzip_bytes_are_a_pure_function_of_the_body(tmp_path: Path) -> None:
    a = store_raw(tmp_path / "a", "crusoe", DAY, URL, BODY)
    b = store_raw(tmp_path / "b", "crusoe", DAY, URL, BODY)
    assert Path(a.stored_path).read_bytes() == Path(b.stored_path).read_bytes()


def test_a_failed_write_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*_args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(rawstore.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        store_raw(tmp_path, "coreweave", DAY, URL, BODY)
    folder = tmp_path / "raw" / "coreweave" / DAY.isoformat()
    assert list(folder.iterdir()) == []  # neither the final name nor a temp file
    monkeypatch.undo()
    page = store_raw(tmp_path, "coreweave", DAY, URL, BODY)  # and a retry then succeeds
    assert read_raw(page.stored_path) == BODY


def test_a_crash_mid_write_never_shows_a_partial_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync
    seen_final: list[bool] = []

    def fsync_then_check(fd: int) -> None:
        real_fsync(fd)
        final = raw_page_path(tmp_path, "coreweave", DAY, hashlib.sha256(BODY).hexdigest(), "html")
        seen_final.append(final.exists())  # while the temp file is written, the page is absent

    monkeypatch.setattr(rawstore.os, "fsync", fsync_then_check)
    store_raw(tmp_path, "coreweave", DAY, URL, BODY)
    assert seen_final == [False]


@pytest.mark.parametrize(
    "provider", ["../runpod", "RunPod", "runpod/..", "paperspace", "", "/etc", "runpod\x00"]
)
def test_bad_providers_never_become_paths(tmp_path: Path, provider: str) -> None:
    with pytest.raises(RawStoreError, match="unknown provider"):
        store_raw(tmp_path, provider, DAY, URL, BODY)
    assert not (tmp_path / "raw").exists()


@pytest.mark.parametrize(
    "date",
    [
        "2026-02-30",
        "2026-1-1",
        "../../etc",
        "/2026-10-12",
        "2026-10-12/..",
        "20261012",
        "2026-10-12T00:00",
        "２０２６-10-12",
    ],
)
def test_bad_dates_never_become_paths(tmp_path: Path, date: str) -> None:
    with pytest.raises(RawStoreError, match="bad date"):
        store_raw(tmp_path, "runpod", date, URL, BODY)


def test_bad_kind_and_digest_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RawStoreError, match="page kind"):
        store_raw(tmp_path, "runpod", DAY, URL, BODY, kind="../x")
    with pytest.raises(RawStoreError, match="sha256"):
        raw_page_path(tmp_path, "runpod", DAY, "../" + "a" * 61, "html")
    with pytest.raises(TypeError):
        store_raw(tmp_path, "runpod", DAY, URL, BODY.decode())  # type: ignore[arg-type]


def test_naive_fetch_times_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="time zone"):
        store_raw(tmp_path, "runpod", DAY, URL, BODY, fetched_at=dt.datetime(2026, 10, 12, 6, 0))


def test_read_raw_detects_a_damaged_page(tmp_path: Path) -> None:
    page = store_raw(tmp_path, "runpod", DAY, URL, BODY)
    Path(page.stored_path).write_bytes(gzip.compress(b"tampered"))
    with pytest.raises(RawStoreError, match="does not match its sha256"):
        read_raw(page.stored_path)
    Path(page.stored_path).write_bytes(b"not gzip at all")
    with pytest.raises(RawStoreError, match="unreadable"):
        read_raw(page.stored_path)
    with pytest.raises(FileNotFoundError):
        read_raw(tmp_path / "missing.html.gz")


def test_validators_index_remembers_each_url(tmp_path: Path) -> None:
    assert lookup_validators(tmp_path, "lambda", URL) is None
    first = store_raw(
        tmp_path, "lambda", DAY, URL, BODY, etag='"v1"', last_modified="Sun, 11 Oct 2026 00:00:00 GMT"
    )
    remember_validators(tmp_path, first)
    other = store_raw(tmp_path, "lambda", DAY, "https://lambda.ai/instances", b"<p>other</p>", etag='"x"')
    remember_validators(tmp_path, other)
    newer = store_raw(tmp_path, "lambda", DAY + dt.timedelta(days=1), URL, BODY + b" ", etag='"v2"')
    remember_validators(tmp_path, newer)
    entries = load_validators(tmp_path, "lambda")
    assert set(entries) == {URL, "https://lambda.ai/instances"}
    assert entries[URL].etag == '"v2"' and entries[URL].stored_path == newer.stored_path
    assert entries[URL].last_modified is None  # the newer response carried no Last-Modified
    index = validators_path(tmp_path, "lambda")
    assert index == tmp_path.resolve() / "raw" / "lambda" / "validators.json"
    assert json.loads(index.read_text())["urls"][URL]["etag"] == '"v2"'
    assert not [p for p in index.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_damaged_validators_index_means_unconditional_fetches(tmp_path: Path) -> None:
    index = validators_path(tmp_path, "nebius")
    index.parent.mkdir(parents=True)
    index.write_text("{not json")
    assert load_validators(tmp_path, "nebius") == {}
    index.write_text(json.dumps({"urls": {URL: {"etag": '"v"'}}}))  # entry missing its fields
    assert load_validators(tmp_path, "nebius") == {}
    page = store_raw(tmp_path, "nebius", DAY, URL, BODY, etag='"v"')
    remember_validators(tmp_path, page)  # rewrites a healthy index
    assert lookup_validators(tmp_path, "nebius", URL).etag == '"v"'
