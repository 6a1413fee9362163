"""What a provider's live fetch asks for: one or more page requests, tried in order."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class PageRequest(BaseModel):
    """One HTTP request for a provider's prices.

    ``fallback`` requests are tried only when every primary request of the provider failed
    (Runpod: the GraphQL API is primary, the HTML pricing page the fallback).

    ``combine`` marks a part of a multi-request source (AWS: one price file per region; Azure:
    the first page of a paged API): the consecutive ``combine`` requests are fetched together
    and stored as ONE combined JSON page (``scrapers/multipage.py``), which the parser reads
    and the archive replays like any single page. An ``optional`` part may fail without
    failing the whole (AWS's spot feeds: on-demand prices alone are still a result).
    """

    url: str
    method: Literal["GET", "POST"] = "GET"
    json_body: dict[str, Any] | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    kind: Literal["html", "json"] = "html"
    fallback: bool = False
    combine: bool = False
    optional: bool = False
