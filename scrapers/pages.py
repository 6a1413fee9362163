"""What a provider's live fetch asks for: one or more page requests, tried in order."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class PageRequest(BaseModel):
    """One HTTP request for a provider's prices.

    ``fallback`` requests are tried only when every primary request of the provider failed
    (Runpod: the GraphQL API is primary, the HTML pricing page the fallback).
    """

    url: str
    method: Literal["GET", "POST"] = "GET"
    json_body: dict[str, Any] | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    kind: Literal["html", "json"] = "html"
    fallback: bool = False
