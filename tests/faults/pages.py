"""Bad pages: what a provider (or a damaged archive) may hand us instead of its price list.

Each builder takes the provider's healthy page (bytes) and returns the faulty body, so the
fault is realistic for that provider's format (HTML table, Next.js payload, GraphQL JSON).
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpuprice.scrapers.archive import SAMPLE_ARCHIVE, find_archived_page, read_archived

LOGIN_PAGE = (
    b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>"
    b'<form action="/login" method="post"><label>Email <input name="email"></label>'
    b'<label>Password <input type="password" name="password"></label>'
    b"<button>Sign in to see pricing</button></form></body></html>"
)
CAPTCHA_PAGE = (
    b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
    b"<h1>Verify you are human</h1><p>Checking your browser before accessing the site.</p>"
    b'<form id="challenge-form" action="/cdn-cgi/challenge-platform" method="POST">'
    b'<input type="hidden" name="cf_chl" value="x"></form></body></html>'
)


def healthy_page(provider: str, on_or_before: str = "2099-12-31") -> tuple[bytes, str]:
    """The newest sample-archive page of a provider (body, kind)."""
    page = find_archived_page(SAMPLE_ARCHIVE, provider, on_or_before)
    assert page is not None, provider
    return read_archived(page.path), page.kind


def truncated(body: bytes) -> bytes:
    """The first 30 % of the page: a download that broke off before the price table ended."""
    return body[: int(len(body) * 0.3)]


def invalid_utf8(body: bytes) -> bytes:
    """Bytes that are not UTF-8 at all (a binary error page, a mis-served image)."""
    noise = random.Random(8).randbytes(len(body))
    # 0xFF never occurs in UTF-8; sprinkling it guarantees the decode fails everywhere.
    return bytes(b | 0x80 for b in noise[: len(noise) // 2]) + b"\xff" * 64


def structure_moved(body: bytes) -> bytes:
    """The same words with the price structure gone: tables and data payloads renamed away.

    Sites redesign: the table becomes a grid of divs, the JSON payload moves to an API call.
    """
    text = body.decode("utf-8", errors="replace")
    for tag in ("table", "thead", "tbody", "tr", "td", "th"):
        text = text.replace(f"<{tag}", "<div").replace(f"</{tag}>", "</div>")
    text = text.replace("__NEXT_DATA__", "__MOVED__").replace("self.__next_f", "self.__moved_f")
    text = text.replace("$", "").replace("/hr", "").replace("/hour", "")
    return text.encode("utf-8")


def half_rows_runpod(body: bytes) -> bytes:
    """Runpod's GraphQL answer with only the first third of the GPU types (a partial response)."""
    data = json.loads(body)
    types = data["data"]["gpuTypes"]
    data["data"]["gpuTypes"] = types[: max(1, len(types) // 3)]
    return json.dumps(data, indent=1).encode("utf-8")


def gzip_bomb(size: int) -> bytes:
    """A small gzip file that inflates to ``size`` bytes of zeros."""
    return gzip.compress(b"\0" * size, compresslevel=9, mtime=0)


def write_archive_page(
    archive: Path, provider: str, day: str, body: bytes, kind: str, *, gz: bool = False
) -> Path:
    """Put ``body`` in a (temporary) archive as the provider's recording of ``day``."""
    folder = archive / provider
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(f"{day}.*"):
        old.unlink()
    path = folder / f"{day}.{kind}{'.gz' if gz else ''}"
    path.write_bytes(body)
    return path


def structure_moved_json(body: bytes) -> bytes:
    """Runpod's API renamed its list (``gpuTypes`` -> ``gpuTypeCatalog``): same data, new place."""
    data = json.loads(body)
    return json.dumps({"data": {"gpuTypeCatalog": data["data"]["gpuTypes"]}}).encode("utf-8")


def oversize_page(size: int) -> bytes:
    """An HTML page of ``size`` bytes (a runaway template repeating its rows)."""
    row = b"<tr><td>NVIDIA H100</td><td>$2.00</td></tr>\n"
    return b"<html><body><table>" + row * (size // len(row) + 1) + b"</table></body></html>"


@dataclass(frozen=True)
class ArchiveFault:
    """A bad recording put in the archive for the fault date, and what the run must report."""

    name: str
    expect: str  # substring of the provider's FAILED line and of provider_runs.error
    body_kept: bool  # whether the body reaches the raw store (it is read, then fails to parse)
    build: Callable[[bytes], bytes]  # healthy page -> faulty page
    kind: str | None = None  # file kind when it differs from the healthy page's
    gz: bool = False


ARCHIVE_MAX = 16 * 1024 * 1024  # gpuprice.scrapers.gunzip.MAX_PAGE_BYTES (asserted in the tests)

ARCHIVE_FAULTS: dict[str, ArchiveFault] = {
    f.name: f
    for f in (
        ArchiveFault("half_rows", "no_sudden_drop", True, half_rows_runpod),
        ArchiveFault("truncated_page", "no price structure", True, truncated),
        ArchiveFault("table_moved", "no price structure", True, structure_moved),
        ArchiveFault("captcha_page", "no price structure", True, lambda body: CAPTCHA_PAGE),
        ArchiveFault("empty_page", "empty page", True, lambda body: b""),
        ArchiveFault("api_list_moved", "no price structure", True, structure_moved_json),
        ArchiveFault("login_page", "no price structure", True, lambda body: LOGIN_PAGE),
        ArchiveFault("invalid_utf8", "no price structure", True, invalid_utf8),
        ArchiveFault(
            "gzip_bomb", "gzip bomb", False, lambda body: gzip_bomb(ARCHIVE_MAX + 4 * 1024 * 1024), gz=True
        ),
        ArchiveFault(
            "page_over_cap", "byte cap", False, lambda body: oversize_page(ARCHIVE_MAX + 1024 * 1024)
        ),
    )
}
