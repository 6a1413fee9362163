"""What the polite fetcher (``scrapers/fetch.py``) takes and gives: its settings, its errors (one
line naming the provider, the URL and the cause) and the page it fetched."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, ConfigDict, Field

from gpuprice.scrapers.gunzip import MAX_PAGE_BYTES
from gpuprice.scrapers.user_agent import default_user_agent


class FetchSettings(BaseModel):
    """Knobs of the polite fetcher (defaults suit a daily scrape of six sites)."""

    model_config = ConfigDict(frozen=True)

    user_agent: str = Field(default_factory=default_user_agent)
    connect_timeout: float = Field(default=10.0, gt=0)
    read_timeout: float = Field(default=30.0, gt=0)
    # Wall-clock budget for one attempt including the whole body (a trickling server).
    attempt_timeout: float = Field(default=120.0, gt=0)
    # Pricing pages are at most a few MB (Nebius' Next.js page is the largest).
    max_bytes: int = Field(default=MAX_PAGE_BYTES, gt=0)
    max_attempts: int = Field(default=4, ge=1, le=10)
    backoff_base: float = Field(default=2.0, ge=0)
    backoff_max: float = Field(default=60.0, ge=0)
    retry_after_max: float = Field(default=300.0, ge=0)
    min_host_interval: float = Field(default=2.0, ge=0)
    crawl_delay_max: float = Field(default=60.0, ge=0)
    max_redirects: int = Field(default=5, ge=0, le=20)
    respect_robots: bool = True


class FetchError(RuntimeError):
    """A page could not be fetched. One line naming the provider, the URL and the cause."""

    def __init__(
        self,
        provider: str,
        url: str,
        cause: str,
        *,
        status: int | None = None,
        attempts: int = 0,
    ) -> None:
        self.provider = provider
        self.url = url
        self.cause = " ".join(str(cause).split())
        self.status = status
        self.attempts = attempts
        super().__init__(f"{provider}: cannot fetch {url}: {self.cause}")


class RobotsDisallowed(FetchError):
    """robots.txt forbids the URL (or could not be read, which counts as forbidding)."""


class FetchedPage(BaseModel):
    """A body as fetched (or, after a 304, as stored from an earlier fetch)."""

    provider: str
    url: str = Field(description="the URL asked for (the key of the validators index)")
    final_url: str = Field(description="where the body came from after redirects")
    status: int
    body: bytes
    etag: str | None = None
    last_modified: str | None = None
    content_type: str | None = None
    not_modified: bool = False
    attempts: int = 1
    fetched_at: dt.datetime
