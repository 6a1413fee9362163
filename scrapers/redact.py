"""Credentials never leave in output.

- A URL's ``user:password@`` is blanked wherever text is shown or stored (a GPUPRICE_LIVE_BASE_URL
  of ``http://user:pass@mirror/`` is echoed by messages, JSON and the raw store's records).
- The fetcher's messages name URLs with credential-looking query values blanked (:func:`scrub_url`)
  and API keys replaced (:func:`redact_text`); the HTTP libraries' own loggers, which log full
  URLs, get a filter blanking every key the fetcher has sent (:func:`guard_library_logs`).
"""

from __future__ import annotations

import logging
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "[redacted]"
# scheme://userinfo@ : the userinfo is everything up to the last "@" before the host's path.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#]*@")
SECRET_QUERY_KEYS = frozenset({"api_key", "apikey", "key", "token", "access_token", "auth", "secret"})
_LIBRARY_LOGGERS = (
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
)


def redact_credentials(text: str) -> str:
    """``text`` with the userinfo of every URL in it blanked: 'http://u:p@h/x' -> 'http://[redacted]@h/x'."""
    return _USERINFO.sub(rf"\1{REDACTED}@", text)


def redact_text(text: str, secrets: set[str]) -> str:
    """``text`` with every one of ``secrets`` replaced by ``[redacted]``."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def scrub_url(url: str) -> str:
    """The URL with credential-looking query values and userinfo blanked, for messages."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1] if "@" in parts.netloc else parts.netloc
    if not parts.query:
        return urlunsplit((parts.scheme, netloc, parts.path, "", parts.fragment))
    pairs = [
        (k, REDACTED if k.lower() in SECRET_QUERY_KEYS else v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(pairs, safe="[]"), parts.fragment))


class _SecretFilter(logging.Filter):
    """Blanks known API keys in records of the HTTP libraries' loggers (httpx logs full URLs)."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            redacted = redact_text(message, self.secrets)
            if redacted != message:
                record.msg, record.args = redacted, None
        return True


_LIBRARY_LOG_FILTER = _SecretFilter()


def guard_library_logs(secret: str) -> None:
    """Blank ``secret`` in the HTTP libraries' log records from now on (process-wide)."""
    _LIBRARY_LOG_FILTER.secrets.add(secret)
    for name in _LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if _LIBRARY_LOG_FILTER not in logger.filters:
            logger.addFilter(_LIBRARY_LOG_FILTER)
