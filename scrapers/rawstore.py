"""The raw page store: every fetched or replayed body, kept byte-exact before anything parses it.

Layout under ``<home>/raw``::

    <provider>/<YYYY-MM-DD>/<sha256>.<html|json>.gz   one body, gzipped, named by its content
    <provider>/validators.json                        per URL: last ETag / Last-Modified / page

Bodies are content-addressed, so storing the same bytes twice for one date is a no-op, and every
write goes to a temporary file first and is moved into place with ``os.replace`` so a crash never
leaves a half-written page under its final name. Provider names and dates are checked before they
become path parts.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import hashlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gpuprice.scrapers.gunzip import MAX_PAGE_BYTES, GunzipError, gunzip_capped
from gpuprice.scrapers.offer import PROVIDERS, Provider
from gpuprice.scrapers.redact import redact_credentials

try:  # POSIX: serialise read-modify-write of the validators index across processes.
    import fcntl
except ImportError:  # pragma: no cover - Windows: atomic replace alone (last writer wins)
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("gpuprice.rawstore")

PageKind = Literal["html", "json"]
PAGE_KINDS: tuple[str, ...] = ("html", "json")
RAW_DIR_NAME = "raw"
VALIDATORS_FILE = "validators.json"
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_SHA256_RE = re.compile(r"[0-9a-f]{64}")


class RawStoreError(ValueError):
    """A bad provider, date or path for the raw store, or an unreadable stored page."""


class RawPage(BaseModel):
    """One stored body; exactly the columns of the warehouse table ``raw_pages``."""

    model_config = ConfigDict(extra="forbid")

    provider: Provider
    url: str = Field(min_length=1)
    snapshot_date: dt.date
    fetched_at: dt.datetime
    http_status: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bytes: int = Field(ge=0, description="length of the body as fetched (before our gzip)")
    stored_path: str = Field(description="absolute path of the gzipped body")
    parser_version: str | None = None

    @field_validator("fetched_at")
    @classmethod
    def _aware(cls, value: dt.datetime) -> dt.datetime:
        # raw_pages.fetched_at is TIMESTAMPTZ: a naive time would be read in the server's zone.
        if value.tzinfo is None:
            raise ValueError("fetched_at must carry a time zone")
        return value


class ValidatorEntry(BaseModel):
    """What the last successful fetch of a URL returned, for conditional requests."""

    model_config = ConfigDict(extra="ignore")

    etag: str | None = None
    last_modified: str | None = None
    stored_path: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    kind: PageKind = "html"
    snapshot_date: dt.date
    fetched_at: dt.datetime


# ---------------------------------------------------------------------------------------------
# Validation of everything that becomes a path part
# ---------------------------------------------------------------------------------------------


def check_provider(provider: str) -> Provider:
    """``provider`` if it is one of the known providers, else RawStoreError naming them."""
    if not isinstance(provider, str) or provider not in PROVIDERS:
        raise RawStoreError(f"unknown provider {provider!r}; valid: {', '.join(PROVIDERS)}")
    return provider  # type: ignore[return-value]


def check_date(value: dt.date | str) -> dt.date:
    """A real calendar date, from a ``date`` or a strict ``YYYY-MM-DD`` string."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str) or not _DATE_RE.fullmatch(value):
        raise RawStoreError(f"bad date {value!r}; expected YYYY-MM-DD")
    try:
        return dt.date.fromisoformat(value)
    except ValueError as exc:
        raise RawStoreError(f"bad date {value!r}: {exc}") from None


def check_kind(kind: str) -> PageKind:
    if kind not in PAGE_KINDS:
        raise RawStoreError(f"bad page kind {kind!r}; valid: {', '.join(PAGE_KINDS)}")
    return kind  # type: ignore[return-value]


def raw_root(home: Path) -> Path:
    return Path(home).expanduser().resolve() / RAW_DIR_NAME


def _inside(root: Path, path: Path) -> Path:
    """``path`` resolved, refusing anything that escapes ``root`` (symlinks included)."""
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise RawStoreError(f"refusing path outside the raw store: {path}")
    return resolved


def raw_page_path(home: Path, provider: str, snapshot_date: dt.date | str, sha256: str, kind: str) -> Path:
    """Where a body with this digest is kept (validated; nothing is created)."""
    provider = check_provider(provider)
    day = check_date(snapshot_date)
    if not _SHA256_RE.fullmatch(sha256):
        raise RawStoreError(f"bad sha256 {sha256!r}")
    kind = check_kind(kind)
    root = raw_root(home)
    return _inside(root, root / provider / day.isoformat() / f"{sha256}.{kind}.gz")


# ---------------------------------------------------------------------------------------------
# Atomic writes
# ---------------------------------------------------------------------------------------------


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def sha256_hex(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def store_raw(
    home: Path,
    provider: str,
    snapshot_date: dt.date | str,
    url: str,
    body: bytes,
    *,
    kind: str = "html",
    http_status: int | None = None,
    etag: str | None = None,
    last_modified: str | None = None,
    fetched_at: dt.datetime | None = None,
    parser_version: str | None = None,
) -> RawPage:
    """Keep ``body`` byte-exact under the raw store and describe it as a ``raw_pages`` row.

    Idempotent: when a body with the same digest is already stored for that provider and date
    the file is left untouched (not rewritten, mtime unchanged).
    """
    if not isinstance(body, bytes | bytearray | memoryview):
        raise TypeError(f"body must be bytes, not {type(body).__name__}")
    body = bytes(body)
    digest = sha256_hex(body)
    path = raw_page_path(home, provider, snapshot_date, digest, kind)
    if path.is_file():
        log.debug("raw page already stored: %s", path)
    else:
        # mtime=0 keeps the gzip bytes a pure function of the body.
        _atomic_write(path, gzip.compress(body, compresslevel=6, mtime=0))
        log.debug("stored raw page %s (%d bytes)", path, len(body))
    return RawPage(
        provider=check_provider(provider),
        url=redact_credentials(url),  # the raw_pages row and its manifest never keep a password
        snapshot_date=check_date(snapshot_date),
        fetched_at=fetched_at or dt.datetime.now(dt.UTC),
        http_status=http_status,
        etag=etag,
        last_modified=last_modified,
        sha256=digest,
        bytes=len(body),
        stored_path=str(path),
        parser_version=parser_version,
    )


def link_raw(home: Path, stored: RawPage, snapshot_date: dt.date | str, **fields) -> RawPage:
    """``stored`` (a body already in the store) kept for another date too, without compressing again.

    The gzip bytes are a pure function of the body, so the other date's copy is a hard link to
    the same file (a byte copy where links are not supported). ``fields`` override the row's
    url, fetched_at, http_status, etag, last_modified or parser_version.
    """
    source = Path(stored.stored_path)
    kind = source.name.split(".")[1]
    path = raw_page_path(home, stored.provider, snapshot_date, stored.sha256, kind)
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        try:
            try:
                os.link(source, tmp)
            except OSError:
                _atomic_write(tmp, source.read_bytes())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    return stored.model_copy(
        update={"snapshot_date": check_date(snapshot_date), "stored_path": str(path), **fields}
    )


def stored_bodies(home: Path, provider: str, snapshot_date: dt.date | str) -> list[Path]:
    """The bodies kept for a provider and date, newest first (several when a fallback was fetched)."""
    folder = raw_root(home) / check_provider(provider) / check_date(snapshot_date).isoformat()
    if not folder.is_dir():
        return []
    found = []
    for entry in folder.iterdir():
        digest, _, rest = entry.name.partition(".")
        if _SHA256_RE.fullmatch(digest) and rest in ("html.gz", "json.gz") and entry.is_file():
            found.append(_inside(raw_root(home), entry))
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def stored_dates(home: Path, provider: str) -> list[dt.date]:
    """The dates the raw store keeps at least one body of ``provider`` for, oldest first."""
    folder = raw_root(home) / check_provider(provider)
    if not folder.is_dir():
        return []
    days = []
    for entry in folder.iterdir():
        if _DATE_RE.fullmatch(entry.name) and entry.is_dir() and any(entry.glob("*.gz")):
            try:
                days.append(dt.date.fromisoformat(entry.name))
            except ValueError:
                continue
    return sorted(days)


def read_raw(path: Path | str, *, max_bytes: int = MAX_PAGE_BYTES, verify: bool = True) -> bytes:
    """The body stored at ``path`` (gunzipped), checked against the digest in its name."""
    path = Path(path)
    try:
        body = gunzip_capped(path.read_bytes(), max_bytes)
    except FileNotFoundError:
        raise
    except GunzipError as exc:
        if exc.reason == "too_large":
            raise RawStoreError(f"stored page {path} inflates past {max_bytes} bytes") from None
        raise RawStoreError(f"stored page {path} is unreadable: {exc}") from None
    except OSError as exc:
        raise RawStoreError(f"stored page {path} is unreadable: {exc}") from None
    expected = path.name.split(".", 1)[0]
    if verify and _SHA256_RE.fullmatch(expected) and sha256_hex(body) != expected:
        raise RawStoreError(f"stored page {path} does not match its sha256 (corrupted?)")
    return body


# ---------------------------------------------------------------------------------------------
# Validators index (ETag / Last-Modified per URL)
# ---------------------------------------------------------------------------------------------


def validators_path(home: Path, provider: str) -> Path:
    root = raw_root(home)
    return _inside(root, root / check_provider(provider) / VALIDATORS_FILE)


@contextlib.contextmanager
def _index_lock(index: Path) -> Iterator[None]:
    index.parent.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover
        yield
        return
    with open(index.with_name(index.name + ".lock"), "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _read_index(index: Path) -> dict[str, ValidatorEntry]:
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        # The index is only an optimisation: a damaged one means unconditional fetches.
        log.warning("ignoring unreadable validators index %s: %s", index, exc)
        return {}
    entries: dict[str, ValidatorEntry] = {}
    urls = data.get("urls", {}) if isinstance(data, dict) else {}
    for url, raw in urls.items() if isinstance(urls, dict) else ():
        try:
            entries[url] = ValidatorEntry.model_validate(raw)
        except ValidationError:
            log.warning("ignoring bad validators entry for %s in %s", url, index)
    return entries


def load_validators(home: Path, provider: str) -> dict[str, ValidatorEntry]:
    """Every remembered URL of a provider with its last validators."""
    return _read_index(validators_path(home, provider))


def lookup_validators(home: Path, provider: str, url: str) -> ValidatorEntry | None:
    """The validators remembered for ``url``, or None."""
    return load_validators(home, provider).get(url)


def remember_validators(home: Path, page: RawPage, *, kind: str = "html") -> ValidatorEntry:
    """Record a stored page as the latest copy of its URL (atomic rewrite of the index)."""
    entry = ValidatorEntry(
        etag=page.etag,
        last_modified=page.last_modified,
        stored_path=page.stored_path,
        sha256=page.sha256,
        kind=check_kind(kind),
        snapshot_date=page.snapshot_date,
        fetched_at=page.fetched_at,
    )
    index = validators_path(home, page.provider)
    with _index_lock(index):
        entries = _read_index(index)
        entries[page.url] = entry
        payload = {
            "version": 1,
            "provider": page.provider,
            "urls": {url: item.model_dump(mode="json") for url, item in sorted(entries.items())},
        }
        _atomic_write(index, (json.dumps(payload, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    return entry
