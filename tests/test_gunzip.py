"""The one capped inflater: members, padding, trailing bytes, the cap, chunked feeding."""

from __future__ import annotations

import gzip
import zlib

import pytest

from gpuprice.scrapers.gunzip import MAX_PAGE_BYTES, CappedInflater, GunzipError, gunzip_capped

BODY = b"<html>" + b"price 2.49 " * 500 + b"</html>"


def chunked(data: bytes, size: int, encoding: str = "gzip", limit: int = MAX_PAGE_BYTES) -> bytes:
    inflater = CappedInflater(encoding, limit)  # type: ignore[arg-type]
    out = b"".join(inflater.feed(data[i : i + size]) for i in range(0, len(data), size))
    inflater.finish()
    return out


def test_members_padding_and_trailing_bytes() -> None:
    joined = gzip.compress(BODY[:100]) + gzip.compress(BODY[100:])
    assert gunzip_capped(joined) == BODY
    assert gunzip_capped(joined + b"\0" * 8) == BODY
    assert gunzip_capped(joined + b"not another member") == BODY  # as gzip(1): ignored


@pytest.mark.parametrize("size", [1, 2, 7, 4096])
def test_chunked_feeding_gives_the_same_body(size: int) -> None:
    joined = gzip.compress(BODY[:100]) + gzip.compress(BODY[100:]) + b"\0\0"
    assert chunked(joined, size) == BODY


@pytest.mark.parametrize("wbits", [zlib.MAX_WBITS, -zlib.MAX_WBITS])
def test_deflate_zlib_wrapped_or_raw(wbits: int) -> None:
    packer = zlib.compressobj(wbits=wbits)
    data = packer.compress(BODY) + packer.flush()
    assert chunked(data, 64, "deflate") == BODY


def test_the_cap_counts_every_member_and_allows_exactly_the_cap() -> None:
    assert gunzip_capped(gzip.compress(b"x" * 1000), 1000) == b"x" * 1000
    with pytest.raises(GunzipError) as caught:
        gunzip_capped(gzip.compress(b"a" * 600) + gzip.compress(b"b" * 600), 1000)
    assert caught.value.reason == "too_large"
    with pytest.raises(GunzipError, match="inflates past 1,000 bytes"):
        chunked(gzip.compress(bytes(8 * 1024 * 1024), compresslevel=9), 512, limit=1000)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x1f\x8b\x08\x00garbage", "truncated"),  # the header never ends
        (b"\x1f\x8b\x09" + bytes(20), "corrupt"),  # an unknown compression method
        (b"this is not gzip", "corrupt"),
        (b"\x1f\x8b", "truncated"),
        (b"", "truncated"),
        (gzip.compress(BODY)[:-12], "truncated"),
    ],
)
def test_corrupt_and_truncated(data: bytes, reason: str) -> None:
    with pytest.raises(GunzipError) as caught:
        gunzip_capped(data)
    assert caught.value.reason == reason
