"""The one capped inflater every page reader uses: HTTP bodies, archived pages, stored raw pages,
pages handed to ``gpuprice parse``.

A few kilobytes of gzip can expand to gigabytes, so no reader ever holds more than the cap (plus
one byte, which tells "exactly at the cap" from "past it"). Concatenated gzip members are one
stream (RFC 1952); after the last member, zero padding and any bytes that do not start another
member are ignored, as gzip(1) does. Callers word the error for their own users (a parser's
StructureMissing, an archive error, a bad-input line) from :class:`GunzipError`'s ``reason``.
"""

from __future__ import annotations

import zlib
from typing import Literal

GZIP_MAGIC = b"\x1f\x8b"
# Pricing pages are well under 1 MB (Nebius' Next.js page, the largest, is a few MB); the cap is
# there for gzip bombs and runaway responses, and is the same for every way a page arrives.
MAX_PAGE_BYTES = 16 * 1024 * 1024

Encoding = Literal["gzip", "deflate"]
Reason = Literal["corrupt", "truncated", "too_large"]


class GunzipError(ValueError):
    """A body that cannot be inflated safely: ``reason`` says why, ``detail`` is zlib's word."""

    def __init__(self, reason: Reason, limit: int, detail: str = "") -> None:
        self.reason: Reason = reason
        self.limit = limit
        self.detail = detail
        text = {
            "corrupt": f"corrupt compressed body ({detail})",
            "truncated": "truncated compressed body",
            "too_large": f"body inflates past {limit:,} bytes",
        }[reason]
        super().__init__(text)


class CappedInflater:
    """Incremental gzip (all members) or deflate decoder that refuses to produce more than ``limit``.

    ``feed`` chunks as they arrive, then ``finish`` once: it raises ``truncated`` when the
    stream ended inside a member. HTTP "deflate" is meant to be zlib-wrapped, but some servers
    send raw deflate; both are accepted.
    """

    def __init__(self, encoding: Encoding = "gzip", limit: int = MAX_PAGE_BYTES) -> None:
        self.encoding = encoding
        self.limit = limit
        self.produced = 0
        self._inflater: zlib._Decompress | None = None
        self._between_members = False  # a member ended; what follows may start another
        self._done = False  # past the end of the data: the rest is ignored
        self._held = b""  # a lone 0x1f at a chunk's end: the start of another member or not

    def _new_inflater(self, first: bytes) -> zlib._Decompress:
        if self.encoding == "gzip":
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        looks_zlib = len(first) >= 2 and first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0
        return zlib.decompressobj(zlib.MAX_WBITS if looks_zlib else -zlib.MAX_WBITS)

    def feed(self, data: bytes) -> bytes:
        out = bytearray()
        if self._held:
            data, self._held = self._held + data, b""
        while data and not self._done:
            if self._between_members:
                data = data.lstrip(b"\x00")
                if not data:
                    break
                if len(data) < 2 and data == GZIP_MAGIC[:1]:
                    self._held = data  # decided by the next chunk
                    break
                if self.encoding != "gzip" or data[:2] != GZIP_MAGIC:
                    self._done = True  # trailing bytes carry nothing
                    break
            if self._inflater is None or self._between_members:
                self._inflater = self._new_inflater(data)
                self._between_members = False
            try:
                chunk = self._inflater.decompress(data, self.limit - self.produced + 1)
            except zlib.error as exc:
                raise GunzipError("corrupt", self.limit, str(exc)) from None
            self.produced += len(chunk)
            out += chunk
            if self.produced > self.limit:
                raise GunzipError("too_large", self.limit)
            if self._inflater.eof:
                self._between_members = True
                data = self._inflater.unused_data
            else:
                data = self._inflater.unconsumed_tail
        return bytes(out)

    @property
    def started(self) -> bool:
        """Whether any compressed data (beyond padding) has been seen."""
        return self._inflater is not None

    def finish(self) -> None:
        """Raise ``truncated`` if the data ended inside a member (an empty body is not an error)."""
        if self._inflater is not None and not self._between_members and not self._done:
            raise GunzipError("truncated", self.limit)


def gunzip_capped(data: bytes, max_bytes: int = MAX_PAGE_BYTES) -> bytes:
    """Inflate a whole gzip body (every member) to at most ``max_bytes`` bytes."""
    inflater = CappedInflater("gzip", max_bytes)
    body = inflater.feed(data)
    if not inflater.started:  # nothing at all
        raise GunzipError("truncated", max_bytes)
    inflater.finish()
    return body
