"""Provider faults, each injected into a whole `gpuprice run` while the other providers land.

Page-content faults go into a temporary copy of the archive (``--source archive``); HTTP faults
come from a mocked transport behind the real polite fetcher (``--source live``). Five faults run
at once, one per provider, with the sixth provider healthy; every fault is then asserted on its
own: the provider fails (or its blocking check flags it), the body that arrived is kept in the
raw store, the previous snapshot stays the latest and turns stale, the run exits 1 and its
output names the provider and the cause, and no row of anything else is lost.

All runs start from one seeded warehouse (the two days before), copied per run.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from faults import http, pages
from faults.runs import RunResult, environment, gpuprice
from faults.seed import SEED_DAYS, TODAY, seeded_home
from faults.tables import partition_counts, partition_rows, provider_run, published_latest, raw_page_rows
from faults.tally import Tally
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE, find_archived_page, read_archived
from gpuprice.scrapers.gunzip import MAX_PAGE_BYTES
from gpuprice.scrapers.multipage import CombinedPart, combined_parts
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.scrapers.rawstore import read_raw
from gpuprice.scrapers.registry import provider_parser
from gpuprice.warehouse.staleness import is_stale

SEED_DAY = SEED_DAYS[-1]  # the previous snapshot every fault run must leave in place

TALLY = Tally("provider_faults")


@dataclass(frozen=True)
class Batch:
    """One run: a fault per listed provider; the providers not listed are healthy."""

    source: str  # archive | live
    faults: dict[str, str]  # provider -> fault name (pages.ARCHIVE_FAULTS or http.FAULTS)
    transient: frozenset[str] = frozenset()  # live: healthy providers whose first answer is a 503

    @property
    def healthy(self) -> list[str]:
        return [p for p in PROVIDERS if p not in self.faults]


BATCHES: dict[str, Batch] = {
    "archive-a": Batch(
        "archive",
        {
            "runpod": "half_rows",
            "lambda": "truncated_page",
            "coreweave": "table_moved",
            "nebius": "captcha_page",
            "crusoe": "empty_page",
        },
    ),
    "archive-b": Batch(
        "archive",
        {
            "runpod": "api_list_moved",
            "lambda": "login_page",
            "coreweave": "invalid_utf8",
            "nebius": "gzip_bomb",
            "massedcompute": "page_over_cap",
        },
    ),
    # The hyperscalers and the marketplace fail alone like the six (a multi-request source fails
    # when a required part does; nothing of it is stored).
    "archive-c": Batch(
        "archive",
        {
            "azure": "login_page",
            "aws": "truncated_page",
            "oci": "captcha_page",
            "vastai": "empty_page",
        },
    ),
    "live-d": Batch(
        "live",
        {
            "azure": "http_503",
            "aws": "truncated_body",
            "oci": "redirect_loop",
            "vastai": "login_page_200",
        },
    ),
    "live-a": Batch(
        "live",
        {
            "runpod": "http_429_retry_after",
            "lambda": "http_500",
            "coreweave": "http_502",
            "nebius": "http_503",
            "crusoe": "connection_refused",
        },
        transient=frozenset({"massedcompute"}),
    ),
    "live-b": Batch(
        "live",
        {
            "runpod": "read_timeout",
            "lambda": "truncated_body",
            "coreweave": "empty_200",
            "nebius": "login_page_200",
            "crusoe": "redirect_loop",
        },
    ),
    "live-c": Batch(
        "live",
        {
            "runpod": "body_over_cap",
            "lambda": "gzip_bomb",
            "coreweave": "invalid_utf8",
            "nebius": "captcha_page_200",
            "massedcompute": "http_404_page_gone",
        },
    ),
}

CASES = [
    (batch, provider, fault) for batch, spec in BATCHES.items() for provider, fault in spec.faults.items()
]


@dataclass
class Outcome:
    """What one batch run did, plus what the tests need to judge it."""

    batch: Batch
    home: Path
    result: RunResult
    seconds: float
    before: dict[tuple[str, dt.date], int]
    seed_rows: dict[str, list[tuple]]
    bodies: dict[str, bytes] = field(default_factory=dict)  # provider -> the faulty body written/served
    served: dict[str, bytes] = field(default_factory=dict)  # healthy provider -> the page it was given
    internet: http.FakeInternet | None = None


def expected_offers(provider: str, body: bytes) -> int:
    return len(provider_parser(provider).parse(body, observed_on=TODAY).offers)


@pytest.fixture(scope="module", autouse=True)
def _write_tally() -> Iterator[None]:
    yield
    TALLY.notes["seed_day"] = SEED_DAY.isoformat()
    TALLY.write()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every provider's snapshots of the two days before today (shared with the process tests)."""
    return seeded_home(tmp_path_factory)


@pytest.fixture(scope="module")
def outcomes(seeded: Path, tmp_path_factory: pytest.TempPathFactory):
    """Runs each batch on first use (on its own copy of the seeded warehouse) and keeps the outcome."""
    done: dict[str, Outcome] = {}

    def get(name: str) -> Outcome:
        if name not in done:
            done[name] = _run_batch(name, BATCHES[name], seeded, tmp_path_factory.mktemp(name))
        return done[name]

    return get


def _run_batch(name: str, batch: Batch, seeded: Path, workdir: Path) -> Outcome:
    home = workdir / "home"
    shutil.copytree(seeded, home)
    before = partition_counts(home)
    seed_rows = {p: partition_rows(home, p, SEED_DAY) for p in PROVIDERS}
    env: dict[str, str | None] = {"GPUPRICE_HOME": str(home), "GPUPRICE_ARCHIVE": None}
    outcome_bodies: dict[str, bytes] = {}
    served: dict[str, bytes] = {}
    internet = None
    if batch.source == "archive":
        archive = workdir / "archive"
        shutil.copytree(SAMPLE_ARCHIVE, archive)
        env["GPUPRICE_ARCHIVE"] = str(archive)
        for provider, fault_name in batch.faults.items():
            fault = pages.ARCHIVE_FAULTS[fault_name]
            healthy, kind = pages.healthy_page(provider, TODAY.isoformat())
            body = fault.build(healthy)
            pages.write_archive_page(
                archive, provider, TODAY.isoformat(), body, fault.kind or kind, gz=fault.gz
            )
            outcome_bodies[provider] = body
            TALLY.fault(f"archive:{fault_name}")
        for provider in batch.healthy:
            page = find_archived_page(archive, provider, TODAY)
            served[provider] = read_archived(page.path)
        args = ("run", "--date", TODAY.isoformat(), "--source", "archive", "--no-reports")
        started = time.perf_counter()
        with environment(env):
            result = gpuprice(*args)
    else:
        faults = {p: http.FAULTS[f] for p, f in batch.faults.items()}
        faults.update({p: http.TRANSIENT_503 for p in batch.transient})
        internet = http.FakeInternet(faults)
        for provider in batch.faults:
            TALLY.fault(f"http:{batch.faults[provider]}")
        for provider in batch.healthy:
            recorded = internet.pages[provider]  # Runpod's API answers; the JSON-only providers have no HTML
            served[provider] = (
                recorded.get("json") if provider == "runpod" else recorded.get("html", recorded.get("json"))
            )
        args = ("run", "--date", TODAY.isoformat(), "--source", "live", "--no-reports")
        started = time.perf_counter()
        with environment(env), pytest.MonkeyPatch.context() as patch:
            patch.setattr("gpuprice.scrapers.collect.PoliteFetcher", internet.fetcher_factory())
            result = gpuprice(*args)
    seconds = time.perf_counter() - started
    survived = (
        result.code == 1 and "Traceback" not in result.err and len(result.provider_lines()) == len(PROVIDERS)
    )
    TALLY.run(survived)
    TALLY.notes.setdefault("run_seconds", {})[name] = round(seconds, 1)  # type: ignore[index]
    return Outcome(batch, home, result, seconds, before, seed_rows, outcome_bodies, served, internet)


# ---------------------------------------------------------------------------------------------
# Each fault on its own
# ---------------------------------------------------------------------------------------------


def _expectation(batch: Batch, fault: str) -> tuple[str, bool]:
    spec = pages.ARCHIVE_FAULTS[fault] if batch.source == "archive" else http.FAULTS[fault]
    return spec.expect, spec.body_kept


@pytest.mark.slow
@pytest.mark.parametrize("batch_name, provider, fault", CASES, ids=[f"{b}-{f}" for b, _, f in CASES])
def test_fault_fails_its_provider_and_keeps_yesterday(outcomes, batch_name: str, provider: str, fault: str):
    outcome = outcomes(batch_name)
    expect, body_kept = _expectation(outcome.batch, fault)

    # The run says which provider failed and why, on the provider's own line; exit 1, no traceback.
    assert outcome.result.code == 1, outcome.result
    assert "Traceback" not in outcome.result.err
    line = outcome.result.provider_lines()[provider]
    assert " FAILED " in line and expect in line, line

    # provider_runs records the failure with the same cause.
    status, error = provider_run(outcome.home, provider, TODAY)
    assert status == "failed" and expect in (error or ""), error

    # Nothing of today's page reached the snapshot; yesterday's partition is untouched, row for row.
    assert partition_rows(outcome.home, provider, TODAY) == []
    after = partition_rows(outcome.home, provider, SEED_DAY)
    TALLY.rows(len(outcome.seed_rows[provider]), len(after))
    assert after == outcome.seed_rows[provider]

    # Analysts still see yesterday's prices for it, flagged stale.
    latest, stale = published_latest(outcome.home)
    assert latest[provider] == SEED_DAY
    assert stale[provider] is True

    # The body that arrived is kept byte-exact (for debugging and re-parsing after a fix).
    stored = raw_page_rows(outcome.home, provider, TODAY)
    if body_kept:
        assert stored, f"{provider}: the {fault} body was not kept"
        kept = [read_raw(path) for _, path, _ in stored]
        if provider in outcome.bodies:  # archive: exactly the recorded body
            assert outcome.bodies[provider] in kept
        else:  # live: exactly the bodies the fake server answered with
            assert sorted(_received(kept)) == sorted(_as_sent(outcome.internet.sent[provider], kept))
    else:
        assert stored == [], f"{provider}: {fault} delivered no page, yet raw_pages lists {stored}"


def _combined(page: bytes) -> list[CombinedPart] | None:
    try:
        return combined_parts(json.loads(page))
    except ValueError:
        return None


def _received(kept: list[bytes]) -> list[bytes]:
    """The bodies the kept raw pages hold. A multi-request provider (AWS, Azure, Vast.ai's
    searches) keeps one combined page (scrapers/multipage.py) whose arrived parts are the bodies
    as received: text byte-exact (as UTF-8), JSON as its parsed value (canonical form here)."""
    bodies: list[bytes] = []
    for page in kept:
        parts = _combined(page)
        if parts is None:  # a single page: the body itself, byte for byte
            bodies.append(page)
            continue
        for part in parts:
            if part.error is None:
                body = part.body
                bodies.append(body.encode("utf-8") if isinstance(body, str) else _canonical(body))
    return bodies


def _as_sent(sent: list[bytes], kept: list[bytes]) -> list[bytes]:
    """The server's 200 bodies in the form ``_received`` gives them (JSON canonical only when the
    kept page is a combined one; a single page must match byte for byte)."""
    if not any(_combined(page) is not None for page in kept):
        return list(sent)
    bodies = []
    for body in sent:
        try:
            bodies.append(_canonical(json.loads(body)))
        except ValueError:
            bodies.append(body)
    return bodies


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")


def page_date(home, provider: str) -> dt.date | None:
    """The date of the page the provider's run for TODAY read (provider_runs.observed_on)."""
    from gpuprice.warehouse.connection import connect_read_only

    con = connect_read_only(home / "warehouse.duckdb")
    try:
        row = con.execute(
            "SELECT observed_on FROM provider_runs WHERE provider = ? AND snapshot_date = ?",
            [provider, TODAY],
        ).fetchone()
    finally:
        con.close()
    return row[0] if row else None


@pytest.mark.slow
@pytest.mark.parametrize("batch_name", list(BATCHES))
def test_the_healthy_providers_land_and_nothing_is_lost(outcomes, batch_name: str):
    outcome = outcomes(batch_name)
    lines = outcome.result.provider_lines()
    failed = sorted(p for p, line in lines.items() if " FAILED " in line)
    assert failed == sorted(outcome.batch.faults), outcome.result.out

    latest, stale = published_latest(outcome.home)
    for provider in outcome.batch.healthy:
        assert " ok " in lines[provider], lines[provider]
        expected = expected_offers(provider, outcome.served[provider])
        landed = len(partition_rows(outcome.home, provider, TODAY))
        TALLY.rows(expected, landed)
        assert landed == expected > 0
        assert provider_run(outcome.home, provider, TODAY) == ("success", None)
        # Stale by the one rule: the page's own date (a replayed recording may be weeks old).
        assert latest[provider] == TODAY and stale[provider] is is_stale(
            page_date(outcome.home, provider), TODAY
        )

    # Every partition that existed before the run still has all its rows.
    after = partition_counts(outcome.home)
    for key, count in outcome.before.items():
        assert after.get(key, 0) == count, key
    for provider in PROVIDERS:
        assert partition_rows(outcome.home, provider, SEED_DAY) == outcome.seed_rows[provider]
    # The warehouse and reports location are printed even when providers failed.
    assert "warehouse:" in outcome.result.out and "analytics:" in outcome.result.out


# ---------------------------------------------------------------------------------------------
# How the live faults were met
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_retry_after_is_honoured_and_each_request_tried_exactly_its_budget(outcomes):
    outcome = outcomes("live-a")
    internet = outcome.internet
    # 429 with Retry-After: 7 -> the fetcher waited 7 s (recorded, not slept) between attempts.
    assert internet.sleeps.count(7.0) >= 3
    # Four attempts per URL and no more: the run does not re-run the failed step on top.
    per_url: dict[str, int] = {}
    for request in internet.requests["runpod"]:
        per_url[str(request.url)] = per_url.get(str(request.url), 0) + 1
    assert per_url and all(n == 4 for n in per_url.values()), per_url
    assert len(internet.requests["lambda"]) % 4 == 0


@pytest.mark.slow
def test_a_transient_503_is_retried_and_the_provider_lands(outcomes):
    outcome = outcomes("live-a")
    assert " ok " in outcome.result.provider_lines()["massedcompute"]
    assert len(outcome.internet.requests["massedcompute"]) == 2
    assert 3.0 in outcome.internet.sleeps  # its Retry-After: 3


def test_the_archive_cap_used_by_the_faults_is_the_products():
    assert pages.ARCHIVE_MAX == MAX_PAGE_BYTES


def test_the_half_rows_page_is_a_sudden_drop_not_a_parse_error():
    healthy, _ = pages.healthy_page("runpod", TODAY.isoformat())
    full = expected_offers("runpod", healthy)
    half = expected_offers("runpod", pages.half_rows_runpod(healthy))
    assert 0 < half < full / 2
