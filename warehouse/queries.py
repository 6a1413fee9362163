"""Read queries shared by assets and commands. User values are always bound parameters."""

from __future__ import annotations

import bisect
import datetime as dt
from pathlib import Path

import duckdb
import pandas as pd

from gpuprice.errors import BadInput
from gpuprice.warehouse.connection import connect_reader
from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS, age_days, is_current, is_stale
from gpuprice.warehouse.views import SNAPSHOT_ROW_KEY

# What rankings and headlines use unless the user asks for more (``--price-basis``).
DEFAULT_PRICE_BASES: tuple[str, ...] = ("list",)


def open_analytics(path: Path) -> duckdb.DuckDBPyConnection:
    """Read-only connection to the published analytics copy (a clear error when there is none)."""
    if not path.exists():
        raise BadInput(
            f"no published warehouse at {path}; run `gpuprice run` first (GPUPRICE_HOME={path.parent})"
        )
    return connect_reader(path)


def newest_snapshot_date(con: duckdb.DuckDBPyConnection) -> dt.date | None:
    """The one notion of "now" for rank, report, history and freshness: the newest snapshot date."""
    row = con.execute("SELECT max(snapshot_date) FROM main.price_snapshots").fetchone()
    return row[0] if row else None


def offers_as_of(
    con: duckdb.DuckDBPyConnection, day: dt.date, price_bases: tuple[str, ...] | None = DEFAULT_PRICE_BASES
) -> pd.DataFrame:
    """Per provider, the offers of its newest scraped snapshot at or before ``day``, as priced on ``day``.

    A scheduled price whose date has come (``effective_from <= day``) replaces the offer's
    current price; one still in the future is left out. Only ``price_bases`` are returned
    (None: every basis); rows keep ``observed_on``, the date of their page.
    """
    return offers_as_of_range(con, day, day, price_bases)[day]


def offers_as_of_range(
    con: duckdb.DuckDBPyConnection,
    first: dt.date,
    last: dt.date,
    price_bases: tuple[str, ...] | None = DEFAULT_PRICE_BASES,
) -> dict[dt.date, pd.DataFrame]:
    """``offers_as_of`` for every date from ``first`` to ``last`` in one query (a backfill's batch)."""
    bases = list(price_bases) if price_bases is not None else None
    frame = con.execute(
        f"""
        WITH days AS (
            SELECT CAST(d AS DATE) AS as_of FROM range(CAST(? AS DATE), CAST(? AS DATE) + INTERVAL 1 DAY, INTERVAL 1 DAY) t(d)
        ),
        runs AS (
            SELECT DISTINCT provider, snapshot_date FROM main.provider_runs
            WHERE status = 'success' AND snapshot_date <= ?
        ),
        newest AS (
            SELECT days.as_of, runs.provider, max(runs.snapshot_date) AS snapshot_date
            FROM days JOIN runs ON runs.snapshot_date <= days.as_of GROUP BY ALL
        )
        SELECT n.as_of AS _as_of, p.* REPLACE (CAST(p.usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour,
                            CAST(p.usd_per_instance_hour AS DOUBLE) AS usd_per_instance_hour)
        FROM main.price_snapshots p JOIN newest n USING (provider, snapshot_date)
        WHERE p.source IN ('scrape', 'archive') AND (p.effective_from IS NULL OR p.effective_from <= n.as_of)
          AND (CAST(? AS VARCHAR[]) IS NULL OR list_contains(CAST(? AS VARCHAR[]), p.price_basis))
        QUALIFY row_number() OVER (
            PARTITION BY n.as_of, {", ".join("p." + c for c in SNAPSHOT_ROW_KEY.split(", "))}
            ORDER BY p.effective_from DESC NULLS LAST
        ) = 1
        -- the whole offer key: ties in rank_offers keep this order, so it must be total
        ORDER BY n.as_of, p.provider, p.sku, p.gpu_count, p.tier, p.community, p.commitment_months,
                 p.region, p.price_basis, p.effective_from
        """,
        [first, last, last, bases, bases],
    ).fetchdf()
    days = [first + dt.timedelta(days=n) for n in range((last - first).days + 1)]
    empty = frame.iloc[0:0].drop(columns="_as_of")
    result = {day: empty for day in days}
    if not frame.empty:
        keys = pd.to_datetime(frame["_as_of"]).dt.date
        for day, rows in frame.groupby(keys, sort=False):
            result[day] = rows.drop(columns="_as_of").reset_index(drop=True)
    return result


def provider_freshness_as_of(con: duckdb.DuckDBPyConnection, day: dt.date) -> pd.DataFrame:
    """Per provider, as of ``day``: its newest success, the date of that page, the latest attempt.

    ``last_error`` is the latest attempt's error (NULL when it succeeded: an old failure never
    shows against a healthy provider); ``age_days`` and ``stale`` follow warehouse/staleness.py.
    """
    frame = con.execute(
        """
        SELECT provider,
            max(snapshot_date) FILTER (WHERE status = 'success') AS last_success_date,
            max(coalesce(observed_on, snapshot_date)) FILTER (WHERE status = 'success') AS last_observed_on,
            max(snapshot_date) AS last_attempt_date,
            arg_max({'status': status, 'error': error}, snapshot_date) AS last_run,
            arg_max(offers, snapshot_date) FILTER (WHERE status = 'success') AS last_offers,
            arg_max(parse_strategy, snapshot_date) AS parse_strategy,
            arg_max(rejected, snapshot_date) AS rejected
        FROM main.provider_runs WHERE snapshot_date <= ? GROUP BY provider ORDER BY provider
        """,
        [day],
    ).fetchdf()
    frame["last_status"] = [run["status"] for run in frame["last_run"]]
    frame["last_error"] = [run["error"] for run in frame["last_run"]]
    frame = frame.drop(columns=["last_run"])
    observed = [None if pd.isna(v) else pd.Timestamp(v).date() for v in frame["last_observed_on"]]
    frame["last_observed_on"] = observed
    frame["age_days"] = [None if o is None else (day - o).days for o in observed]
    frame["stale"] = [
        is_stale(o, day, last_status=status) for o, status in zip(observed, frame["last_status"], strict=True)
    ]
    return frame


def stale_providers(con: duckdb.DuckDBPyConnection, day: dt.date) -> set[str]:
    """Providers stale on ``day`` by the one rule (warehouse/staleness.py), measured from observed_on."""
    frame = provider_freshness_as_of(con, day)
    return set(frame.loc[frame["stale"], "provider"])


def stale_providers_range(
    con: duckdb.DuckDBPyConnection, first: dt.date, last: dt.date
) -> dict[dt.date, set[str]]:
    """``stale_providers`` for every date from ``first`` to ``last`` (one read of provider_runs).

    The same rule as provider_freshness_as_of: the newest successful observation up to each date
    (its page's observed_on) and the status of the latest attempt at or before it.
    """
    rows = con.execute(
        "SELECT provider, snapshot_date, status, coalesce(observed_on, snapshot_date) FROM main.provider_runs"
        " WHERE snapshot_date <= ? ORDER BY provider, snapshot_date",
        [last],
    ).fetchall()
    # Per provider: run dates, their status and the newest successful observation up to each run.
    runs: dict[str, tuple[list[dt.date], list[str], list[dt.date | None]]] = {}
    for provider, snapshot_date, status, observed_on in rows:
        dates, statuses, newest_seen = runs.setdefault(provider, ([], [], []))
        previous = newest_seen[-1] if newest_seen else None
        if status == "success" and (previous is None or observed_on > previous):
            previous = observed_on
        dates.append(snapshot_date)
        statuses.append(status)
        newest_seen.append(previous)
    result: dict[dt.date, set[str]] = {}
    for n in range((last - first).days + 1):
        day = first + dt.timedelta(days=n)
        stale = set()
        for provider, (dates, statuses, newest_seen) in runs.items():
            upto = bisect.bisect_right(dates, day)
            if upto == 0:
                continue  # no run yet on that date: the provider is not known on that day
            if is_stale(newest_seen[upto - 1], day, last_status=statuses[upto - 1]):
                stale.add(provider)
        result[day] = stale
    return result


def price_history_series(
    con: duckdb.DuckDBPyConnection,
    gpu: str,
    tier: str,
    since: dt.date,
    until: dt.date,
    max_age_days: int = MAX_PRICE_AGE_DAYS,
) -> pd.DataFrame:
    """Per day and provider, the provider's cheapest in-force list price for the GPU (``gpuprice history``).

    Last observation carried forward (analytics.daily_prices), kept while its page is at most
    ``max_age_days`` old; ``cheapest`` marks the cheapest provider of each day (ties: provider name);
    ``source`` says where the point came from (scrape, archive, public_report, catalog_history).
    """
    return con.execute(
        """
        WITH per_provider AS (
            SELECT date, provider, gpu_count, community, tier, CAST(usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour,
                observed_on, age_days, source
            FROM main.v_daily_prices
            WHERE gpu = ? AND tier = ? AND price_basis = 'list' AND date BETWEEN ? AND ? AND age_days <= ?
            QUALIFY row_number() OVER (
                PARTITION BY date, provider
                ORDER BY usd_per_gpu_hour, gpu_count, community, commitment_months NULLS FIRST, region NULLS FIRST
            ) = 1
        )
        SELECT *, row_number() OVER (PARTITION BY date ORDER BY usd_per_gpu_hour, provider) = 1 AS cheapest
        FROM per_provider ORDER BY date, provider
        """,
        [gpu, tier, since, until, max_age_days],
    ).fetchdf()


def headline_offers(
    con: duckdb.DuckDBPyConnection, gpus: tuple[str, ...], day: dt.date | None = None
) -> list[tuple]:
    """Cheapest current on-demand list price of each GPU on ``day`` (default: the newest snapshot
    date): analytics.cheapest_by_gpu's row, so `run`, the view and `history` name the same offer."""
    return con.execute(
        """
        SELECT gpu, provider, gpu_count, community, price_basis, usd_per_gpu_hour, observed_on
        FROM main.v_cheapest_by_gpu
        WHERE list_contains(?, gpu) AND tier = 'on_demand'
          AND snapshot_date = coalesce(CAST(? AS DATE), (SELECT max(snapshot_date) FROM main.price_snapshots))
        ORDER BY gpu
        """,
        [list(gpus), day],
    ).fetchall()


def offers_missing_from_catalog(
    con: duckdb.DuckDBPyConnection, day: dt.date, last: dt.date | None = None
) -> pd.DataFrame:
    """Offers of ``day`` (or of every date from ``day`` to ``last``) whose GPU is not in dim_gpu."""
    return con.execute(
        """SELECT p.provider, p.gpu, p.gpu_raw, count(*) AS offers
           FROM main.price_snapshots p LEFT JOIN main.dim_gpu g ON g.slug = p.gpu
           WHERE p.snapshot_date BETWEEN ? AND ? AND g.slug IS NULL
           GROUP BY ALL ORDER BY p.provider, p.gpu_raw""",
        [day, last or day],
    ).fetchdf()


def catalog_size(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM main.dim_gpu").fetchone()
    return int(row[0]) if row else 0


def offers_with_specs_summary(
    con: duckdb.DuckDBPyConnection, first: dt.date, day: dt.date
) -> tuple[int, pd.DataFrame]:
    """offers_with_specs rows from ``first`` to ``day``, and ``day``'s five best list prices per PFLOP-hour."""
    row = con.execute(
        "SELECT count(*) FROM main.v_offers_with_specs WHERE snapshot_date BETWEEN ? AND ?", [first, day]
    ).fetchone()
    top = con.execute(
        """SELECT provider, gpu, gpu_count, tier, usd_per_gpu_hour, usd_per_pflop_hour, usd_per_gb_hour
           FROM main.v_offers_with_specs
           WHERE snapshot_date = ? AND usd_per_pflop_hour IS NOT NULL AND in_force AND price_basis = 'list'
           ORDER BY usd_per_pflop_hour, provider, gpu_count, sku LIMIT 5""",
        [day],
    ).fetchdf()
    return (int(row[0]) if row else 0), top


def snapshot_row_count(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM main.price_snapshots").fetchone()
    return int(row[0]) if row else 0


def latest_prices_count(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM main.v_latest_prices").fetchone()
    return int(row[0]) if row else 0


def provider_runs_between(
    con: duckdb.DuckDBPyConnection, provider: str, first: dt.date, last: dt.date
) -> list[tuple]:
    """The provider's runs from ``first`` to ``last``: (date, status, offers, offers the parser saw)."""
    return con.execute(
        """SELECT snapshot_date, status, offers, CAST(json_extract(parse_report, '$.offers') AS INTEGER)
           FROM main.provider_runs WHERE provider = ? AND snapshot_date BETWEEN ? AND ?""",
        [provider, first, last],
    ).fetchall()


def provider_runs_of_run(con: duckdb.DuckDBPyConnection, run_id: str) -> pd.DataFrame:
    """What one Dagster run recorded per provider and date, oldest date first: provider,
    snapshot_date, status, offers, rejected, unknown_gpus, error, parse_strategy, observed_on."""
    return con.execute(
        "SELECT provider, snapshot_date, status, offers, rejected, unknown_gpus, error, parse_strategy,"
        " observed_on FROM main.provider_runs WHERE run_id = ? ORDER BY snapshot_date, provider",
        [run_id],
    ).fetchdf()


def cheapest_list_offer(
    con: duckdb.DuckDBPyConnection,
    gpu: str,
    gpus: int,
    day: dt.date,
    tiers: tuple[str, ...] = ("on_demand",),
    max_age_days: int = MAX_PRICE_AGE_DAYS,
) -> dict | None:
    """The cheapest current list price for ``gpus`` x ``gpu`` in each provider's newest snapshot
    at or before ``day``: an offer of exactly that many GPUs, or for a multiple of 8 whole 8-GPU
    nodes (``nodes`` > 1). ``from``/``lowest_now`` prices are floors, not prices one can rent at.
    Current: the page at most ``max_age_days`` before ``day`` (warehouse/staleness.py); when no
    price is current the cheapest older one comes back with ``current`` false (never to be used
    as the market price, only named). None when no provider lists one."""
    offers = offers_as_of(con, day)
    if offers.empty:
        return None
    basis = (
        offers["price_basis"] if "price_basis" in offers.columns else pd.Series("list", index=offers.index)
    )
    usable = offers[
        (offers["gpu"] == gpu)
        & (basis.fillna("list") == "list")
        & offers["tier"].isin(tiers)
        & (offers["usd_per_gpu_hour"] > 0)
    ]
    exact = usable[usable["gpu_count"] == gpus]
    per_node = 8
    if exact.empty and gpus % per_node == 0:
        exact = usable[usable["gpu_count"] == per_node]
    if exact.empty:
        return None
    pages = exact["observed_on"] if "observed_on" in exact.columns else exact["snapshot_date"]
    seen = pd.to_datetime(pages.where(pages.notna(), exact["snapshot_date"])).dt.date
    ages = seen.map(lambda d: max(age_days(d, day) or 0, 0))
    fresh = seen.map(lambda d: is_current(d, day, max_age_days)).astype(bool)
    current = bool(fresh.any())
    exact = exact.assign(_age=ages)
    if current:
        exact = exact[fresh]
    best = exact.sort_values(["usd_per_gpu_hour", "provider", "sku"], kind="stable").iloc[0]
    observed = best["observed_on"] if "observed_on" in best.index and pd.notna(best["observed_on"]) else None
    snapshot = pd.Timestamp(best["snapshot_date"]).date()
    return {
        "provider": str(best["provider"]),
        "sku": str(best["sku"]),
        "tier": str(best["tier"]),
        "community": bool(best["community"]),
        "gpu_count": int(best["gpu_count"]),
        "nodes": gpus // int(best["gpu_count"]),
        "usd_per_gpu_hour": round(float(best["usd_per_gpu_hour"]), 4),
        "price_basis": "list",
        "observed_on": (pd.Timestamp(observed).date() if observed is not None else snapshot).isoformat(),
        "snapshot_date": snapshot.isoformat(),
        "price_age_days": int(best["_age"]),
        "current": current,
    }


def newest_snapshot(con: duckdb.DuckDBPyConnection, provider: str) -> tuple[dt.date | None, list[dict]]:
    """The provider's newest scraped/replayed snapshot: its date and its offers (none: None, [])."""
    row = con.execute(
        "SELECT max(snapshot_date) FROM main.price_snapshots WHERE provider = ? AND source IN ('scrape', 'archive')",
        [provider],
    ).fetchone()
    day = row[0] if row else None
    if day is None:
        return None, []
    cursor = con.execute(
        """SELECT sku, gpu_count, tier, community, commitment_months, region,
                  CAST(effective_from AS VARCHAR) AS effective_from, price_basis,
                  CAST(usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour
           FROM main.price_snapshots
           WHERE provider = ? AND snapshot_date = ? AND source IN ('scrape', 'archive')""",
        [provider, day],
    )
    names = [d[0] for d in cursor.description]
    return day, [dict(zip(names, row)) for row in cursor.fetchall()]


def raw_pages_to_reparse(
    con: duckdb.DuckDBPyConnection, provider: str, first: dt.date, last: dt.date
) -> dict[dt.date, dict]:
    """Per date of the range, the raw_pages row to parse again: the page the date's snapshot came
    from when there is one, else the newest page fetched for the date."""
    frame = con.execute(
        """
        SELECT r.*, s.observed_on AS page_date FROM main.raw_pages r
        LEFT JOIN (SELECT DISTINCT snapshot_date, raw_sha256, observed_on FROM main.price_snapshots
                   WHERE provider = ? AND snapshot_date BETWEEN ? AND ? AND source IN ('scrape', 'archive')) s
          ON s.snapshot_date = r.snapshot_date AND s.raw_sha256 = r.sha256
        WHERE r.provider = ? AND r.snapshot_date BETWEEN ? AND ?
        QUALIFY row_number() OVER (PARTITION BY r.snapshot_date
                                   ORDER BY s.raw_sha256 IS NOT NULL DESC, r.fetched_at DESC, r.sha256) = 1
        """,
        [provider, first, last, provider, first, last],
    ).fetchdf()
    rows = {}
    for record in frame.to_dict("records"):
        record = {k: (None if isinstance(v, float) and v != v else v) for k, v in record.items()}
        record["snapshot_date"] = pd.Timestamp(record["snapshot_date"]).date()
        record["fetched_at"] = pd.Timestamp(record["fetched_at"]).to_pydatetime()
        if record.get("page_date") is not None:
            record["page_date"] = pd.Timestamp(record["page_date"]).date()
        if record.get("http_status") is not None:
            record["http_status"] = int(record["http_status"])
        rows[record["snapshot_date"]] = record
    return rows


def first_stored_page(con: duckdb.DuckDBPyConnection, providers: list[str]) -> dt.date | None:
    """The earliest date the raw_pages manifest holds a page for, among ``providers``."""
    row = con.execute(
        "SELECT min(snapshot_date) FROM main.raw_pages WHERE list_contains(?, provider)", [providers]
    ).fetchone()
    return row[0] if row else None
