"""Page input shared by the provider parsers: gzip sniffing with a cap, UTF-8 with a note, blank pages."""

from __future__ import annotations

import gzip

import pytest

from gpuprice.scrapers.offer import ParseReport, StructureMissing
from gpuprice.scrapers.page_input import (
    UNDECODABLE_NOTE,
    UNDECODABLE_NOTE_SEMICOLON,
    gunzip_page,
    page_text,
)

PAGE = "<html><body><table><tr><th>GPU</th><th>Price</th></tr><tr><td>H100</td><td>$2.49 – from €</td></tr></table></body></html>"


def report() -> ParseReport:
    return ParseReport(provider="lambda")


def test_plain_utf8_page_is_returned_unchanged_without_notes() -> None:
    rep = report()
    assert page_text(PAGE.encode(), rep) == PAGE
    assert rep.notes == []


@pytest.mark.parametrize("prefix", [b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf"])
def test_byte_order_marks_are_stripped(prefix: bytes) -> None:
    assert page_text(prefix + PAGE.encode(), report()) == PAGE


def test_undecodable_bytes_are_replaced_and_noted_once() -> None:
    rep = report()
    text = page_text(b"\xef\xbb\xbf<p>caf\xe9 \xff\xfe</p>", rep)
    assert text == "<p>caf\ufffd \ufffd\ufffd</p>"  # the BOM goes even when the rest is not UTF-8
    assert rep.notes == [UNDECODABLE_NOTE]


def test_the_note_wording_is_the_callers() -> None:
    rep = report()
    page_text(b"<p>\xc3\x28</p>", rep, undecodable_note=UNDECODABLE_NOTE_SEMICOLON)
    assert rep.notes == ["page is not valid UTF-8; undecodable bytes replaced"]


def test_gzip_is_sniffed_by_its_magic_bytes_and_inflated() -> None:
    rep = report()
    assert page_text(gzip.compress(PAGE.encode()), rep) == PAGE
    assert rep.notes == []


def test_gzipped_page_that_is_not_utf8_is_inflated_then_noted() -> None:
    rep = report()
    assert page_text(gzip.compress(b"<p>\xff</p>"), rep) == "<p>\ufffd</p>"
    assert rep.notes == [UNDECODABLE_NOTE]


def test_concatenated_gzip_members_are_one_page_and_trailing_padding_is_ignored() -> None:
    body = PAGE.encode()
    joined = gzip.compress(body[:40]) + gzip.compress(body[40:]) + b"\0" * 16
    assert gunzip_page(joined, "lambda") == body


def test_inflating_exactly_to_the_cap_is_allowed() -> None:
    assert gunzip_page(gzip.compress(b"x" * 1000), "lambda", max_bytes=1000) == b"x" * 1000


# One byte past the cap, and a bomb: 8 MiB of zeros in about 8 KB of gzip.
@pytest.mark.parametrize("size", [1001, 8 * 1024 * 1024])
def test_inflating_past_the_cap_is_structure_missing(size: int) -> None:
    bomb = gzip.compress(bytes(size), compresslevel=9)
    with pytest.raises(StructureMissing, match=r"gzip body inflates past 1,000 bytes") as caught:
        page_text(bomb, ParseReport(provider="nebius"), max_bytes=1000)
    assert caught.value.provider == "nebius"


def test_the_cap_counts_every_member() -> None:
    with pytest.raises(StructureMissing, match="inflates past"):
        gunzip_page(gzip.compress(b"a" * 600) + gzip.compress(b"b" * 600), "crusoe", max_bytes=1000)


@pytest.mark.parametrize(
    ("content", "what"),
    [
        (b"\x1f\x8b\x08\x00garbage", "corrupt gzip body"),
        (b"\x1f\x8b", "corrupt gzip body (truncated stream)"),
        (gzip.compress(PAGE.encode())[:-12], "corrupt gzip body (truncated stream)"),
    ],
)
def test_corrupt_or_truncated_gzip_is_structure_missing(content: bytes, what: str) -> None:
    with pytest.raises(StructureMissing) as caught:
        page_text(content, ParseReport(provider="massedcompute"))
    assert caught.value.provider == "massedcompute"
    assert caught.value.what.startswith(what)


@pytest.mark.parametrize(
    "content", [b"", b" \n\t ", b"\xef\xbb\xbf", b"\xef\xbb\xbf  \r\n", gzip.compress(b"")]
)
def test_blank_pages_are_structure_missing(content: bytes) -> None:
    with pytest.raises(StructureMissing) as caught:
        page_text(content, ParseReport(provider="coreweave"))
    assert (caught.value.provider, caught.value.what) == ("coreweave", "empty page")
