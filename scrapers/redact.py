"""Credentials never leave in output: a URL's ``user:password@`` is blanked wherever text is shown
or stored (a GPUPRICE_LIVE_BASE_URL of ``http://user:pass@mirror/`` is echoed by messages, JSON and
the raw store's records). Query-string keys are blanked by the fetcher (``scrapers/fetch.py``)."""

from __future__ import annotations

import re

REDACTED = "[redacted]"
# scheme://userinfo@ : the userinfo is everything up to the last "@" before the host's path.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#]*@")


def redact_credentials(text: str) -> str:
    """``text`` with the userinfo of every URL in it blanked: 'http://u:p@h/x' -> 'http://[redacted]@h/x'."""
    return _USERINFO.sub(rf"\1{REDACTED}@", text)
