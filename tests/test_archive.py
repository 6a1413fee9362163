"""Archive replay: the latest page at or before a date, strict names, no path tricks, capped
gunzip, and collect_page(source="archive") storing what it replays."""

from __future__ import annotations

import datetime as dt
import gzip
import os
from pathlib import Path

import pytest

from gpuprice.scrapers.archive import (
    SAMPLE_ARCHIVE,
    ArchiveError,
    archive_dates,
    find_archived_page,
    newest_archive_date,
    parse_archive_name,
    read_archived,
)
from gpuprice.scrapers.collect import collect_page
from gpuprice.scrapers.collected import NoArchivedPage
from gpuprice.scrapers.rawstore import RawStoreError, read_raw

D = dt.date.fromisoformat
MB = 1024 * 1024


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    root = tmp_path / "archive"
    write(root / "lambda" / "2026-07-16.html", b"<html>july</html>")
    write(root / "lambda" / "2026-09-01.html.gz", gzip.compress(b"<html>september</html>"))
    write(root / "lambda" / "2026-10-06.html", b"<html>october</html>")
    write(root / "nebius" / "2026-05-31.html", b"<html>may</html>")
    write(root / "runpod" / "2026-08-30.json", b'{"data": {"gpuTypes": []}}')
    write(root / "runpod" / "2026-08-30.html", b"<html>runpod page</html>")
    # Things that are not recordings and must be ignored.
    write(root / "README.md", b"# recorded pages")
    write(root / "lambda" / "SOURCES.md", b"where these came from")
    write(root / "lambda" / "prices.csv", b"gpu,price")
    write(root / "lambda" / "2026-02-30.html", b"no such day")
    write(root / "lambda" / "2026-10-07.htm", b"wrong extension")
    write(root / "lambda" / "2026-10-08.html.bak", b"backup")
    write(root / "lambda" / "2026-10-09.html.gz.gz", b"double")
    write(root / "lambda" / ".2026-10-10.html", b"hidden")
    write(root / "lambda" / "2026-10-11.HTML", b"upper case")
    (root / "lambda" / "2026-10-12.html").mkdir()  # a folder, not a page
    write(root / "paperspace" / "2026-10-01.html", b"not one of our providers")
    return root


def test_latest_page_at_or_before_the_date(archive: Path) -> None:
    assert find_archived_page(archive, "lambda", D("2026-10-06")).path.name == "2026-10-06.html"
    page = find_archived_page(archive, "lambda", D("2026-10-05"))
    assert (page.path.name, page.page_date, page.kind, page.compressed) == (
        "2026-09-01.html.gz",
        D("2026-09-01"),
        "html",
        True,
    )
    assert find_archived_page(archive, "lambda", "2026-08-31").page_date == D("2026-07-16")
    assert find_archived_page(archive, "lambda", D("2030-01-01")).page_date == D(
        "2026-10-06"
    )  # ignores junk newer names
    assert find_archived_page(archive, "lambda", D("2026-07-15")) is None
    assert find_archived_page(archive, "crusoe", D("2026-10-06")) is None
    assert find_archived_page(archive.parent / "nowhere", "lambda", D("2026-10-06")) is None


def test_the_api_recording_wins_a_tie(archive: Path) -> None:
    page = find_archived_page(archive, "runpod", D("2026-09-01"))
    assert page.kind == "json" and page.path.name == "2026-08-30.json"


def test_dates_per_provider(archive: Path) -> None:
    assert archive_dates(archive) == {
        "lambda": [D("2026-07-16"), D("2026-09-01"), D("2026-10-06")],
        "nebius": [D("2026-05-31")],
        "runpod": [D("2026-08-30")],
    }
    assert newest_archive_date(archive) == D("2026-10-06")
    assert newest_archive_date(archive.parent / "empty") is None


@pytest.mark.parametrize(
    "name",
    [
        "../2026-01-01.html",
        "2026-01-01.html/..",
        "2026-01-01.html\x00",
        " 2026-01-01.html",
        "2026-1-01.html",
        "٢٠٢٦-01-01.html",
        "2026-01-01.html.gz.tmp",
        "2026-13-01.json",
    ],
)
def test_names_that_are_not_exactly_the_pattern_are_refused(name: str) -> None:
    assert parse_archive_name(name) is None


def test_a_provider_argument_cannot_walk_out(archive: Path) -> None:
    for provider in ("../lambda", "lambda/../nebius", "/etc", "paperspace"):
        with pytest.raises(RawStoreError, match="unknown provider"):
            find_archived_page(archive, provider, D("2026-10-06"))


def test_symlinks_leading_outside_the_archive_are_skipped(tmp_path: Path, archive: Path) -> None:
    secret = write(tmp_path / "outside" / "secret.html", b"<html>not yours</html>")
    os.symlink(secret, archive / "lambda" / "2026-12-01.html")
    os.symlink(tmp_path / "outside", archive / "crusoe")
    write(tmp_path / "outside" / "2026-12-01.html", b"<html>outside</html>")
    inside = archive / "lambda" / "2026-10-06.html"
    os.symlink(inside, archive / "nebius" / "2026-12-02.html")  # a link within the archive is fine
    assert find_archived_page(archive, "lambda", D("2026-12-31")).page_date == D("2026-10-06")
    assert find_archived_page(archive, "crusoe", D("2026-12-31")) is None
    assert find_archived_page(archive, "nebius", D("2026-12-31")).page_date == D("2026-12-02")


def test_read_archived_plain_and_gzipped(archive: Path) -> None:
    assert read_archived(archive / "lambda" / "2026-10-06.html") == b"<html>october</html>"
    assert read_archived(archive / "lambda" / "2026-09-01.html.gz") == b"<html>september</html>"
    # A page saved still compressed under a plain name is recognised by its magic bytes.
    sneaky = write(archive / "crusoe" / "2026-10-01.html", gzip.compress(b"<html>crusoe</html>"))
    assert read_archived(sneaky) == b"<html>crusoe</html>"
    members = write(
        archive / "crusoe" / "2026-10-02.html.gz", gzip.compress(b"<html>a") + gzip.compress(b"b</html>")
    )
    assert read_archived(members) == b"<html>ab</html>"


def test_gzip_bomb_in_the_archive_raises_a_clear_error(tmp_path: Path) -> None:
    bomb = write(tmp_path / "a" / "lambda" / "2026-10-01.html.gz", gzip.compress(bytes(20 * MB), mtime=0))
    with pytest.raises(ArchiveError, match=r"inflates past the 5242880-byte cap \(gzip bomb\?\)"):
        read_archived(bomb, max_bytes=5 * MB)
    assert len(read_archived(bomb, max_bytes=21 * MB)) == 20 * MB


def test_oversized_truncated_and_fake_gzip_pages(tmp_path: Path) -> None:
    big = write(tmp_path / "big.html", b"x" * (MB + 1))
    with pytest.raises(ArchiveError, match="over the 1048576-byte cap"):
        read_archived(big, max_bytes=MB)
    data = gzip.compress(b"<html>" + os.urandom(4096).hex().encode() + b"</html>")
    cut = write(tmp_path / "cut.html.gz", data[: len(data) // 2])
    with pytest.raises(ArchiveError, match="truncated gzip"):
        read_archived(cut)
    fake = write(tmp_path / "fake.html.gz", b"<html>plain</html>")
    with pytest.raises(ArchiveError, match="not gzip"):
        read_archived(fake)


def test_collect_from_archive_stores_the_replayed_page(tmp_path: Path, archive: Path) -> None:
    home = tmp_path / "home"
    page = collect_page("lambda", D("2026-10-05"), source="archive", home=home, archive_dir=archive)
    assert page.source == "archive" and page.body == b"<html>september</html>"
    assert page.page_date == D("2026-09-01") and page.snapshot_date == D("2026-10-05")
    raw = page.raw
    assert raw.url == "archive://lambda/2026-09-01.html.gz"
    assert raw.http_status is None and raw.etag is None and raw.snapshot_date == D("2026-10-05")
    assert raw.fetched_at.tzinfo is not None
    assert f"/raw/lambda/2026-10-05/{raw.sha256}.html.gz" in raw.stored_path
    assert read_raw(raw.stored_path) == page.body
    again = collect_page("lambda", "2026-10-05", source="archive", home=home, archive_dir=archive)
    assert again.raw.stored_path == raw.stored_path


def test_no_archived_page_names_provider_date_and_folder(tmp_path: Path, archive: Path) -> None:
    with pytest.raises(NoArchivedPage) as info:
        collect_page("lambda", D("2026-01-01"), source="archive", home=tmp_path, archive_dir=archive)
    assert isinstance(info.value, FileNotFoundError)
    message = str(info.value)
    assert "lambda" in message and "2026-01-01" in message and str(archive) in message
    assert "recordings start 2026-07-16" in message
    with pytest.raises(NoArchivedPage, match="has no crusoe recordings"):
        collect_page("crusoe", D("2026-10-06"), source="archive", home=tmp_path, archive_dir=archive)
    with pytest.raises(NoArchivedPage, match="archive folder does not exist"):
        collect_page(
            "crusoe", D("2026-10-06"), source="archive", home=tmp_path, archive_dir=tmp_path / "nope"
        )
    assert not (tmp_path / "raw").exists()


def test_archive_dir_defaults_to_the_bundled_sample_not_the_environment(
    tmp_path: Path, archive: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GPUPRICE_ARCHIVE is read at the edge (gpuprice.settings) and passed down, never here.
    monkeypatch.setenv("GPUPRICE_ARCHIVE", str(archive))
    page = collect_page("nebius", D("2026-06-01"), source="archive", home=tmp_path)
    assert page.body == read_archived(find_archived_page(SAMPLE_ARCHIVE, "nebius", D("2026-06-01")).path)
    assert page.body != b"<html>may</html>"


def test_unknown_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown source 'web'"):
        collect_page("nebius", D("2026-06-01"), source="web", home=tmp_path)  # type: ignore[arg-type]
