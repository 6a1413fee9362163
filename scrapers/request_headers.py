"""What goes out with a page request: its headers (Accept, the provider's own, an API key for API
calls only, the validators of a conditional GET) and its body."""

from __future__ import annotations

import json
from dataclasses import dataclass

from gpuprice.scrapers.pages import PageRequest
from gpuprice.scrapers.rawstore import ValidatorEntry

_HTML_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"


@dataclass(frozen=True)
class Outgoing:
    """A page request as sent: headers, the names of the secret ones, whether it is conditional,
    and the body (JSON for a POST that has one)."""

    headers: dict[str, str]
    secret_headers: frozenset[str]
    conditional: bool
    content: bytes | None


def outgoing(request: PageRequest, cached: ValidatorEntry | None, api_key: str | None) -> Outgoing:
    """The headers and body for ``request``; ``cached`` makes a GET conditional."""
    headers: dict[str, str] = {"Accept": "application/json" if request.kind == "json" else _HTML_ACCEPT}
    for name, value in request.headers.items():
        # We always say who we are, and only accept encodings we can decode with a cap.
        if name.lower() not in ("user-agent", "accept-encoding"):
            headers[name] = value
    content = None
    if request.method == "POST" and request.json_body is not None:
        headers["Content-Type"] = "application/json"
        content = json.dumps(request.json_body, separators=(",", ":")).encode("utf-8")
    secret: set[str] = set()
    if api_key and request.kind == "json":  # API calls only: HTML pricing pages need no key
        headers["Authorization"] = f"Bearer {api_key}"
        secret.add("authorization")
    conditional = cached is not None and request.method == "GET" and bool(cached.etag or cached.last_modified)
    if conditional and cached is not None:
        if cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified
    return Outgoing(
        headers=headers, secret_headers=frozenset(secret), conditional=conditional, content=content
    )
