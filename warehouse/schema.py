"""Warehouse schema and forward migrations.

Each migration moves the schema one version forward in one transaction; a warehouse made by
an older gpuprice upgrades in place and keeps its rows. Never edit a released migration:
add a new one.

Naming rule for views: analysts' views live in schema ``analytics`` and read only ``main``
objects (``main.price_snapshots``). The published copy is a file called ``analytics.duckdb``,
so its catalog is also called ``analytics``; a view that said ``analytics.other_view`` would be
ambiguous there.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import duckdb

# Version 1: the first released schema (kept verbatim: tests build a v1 file from it).
V1_DDL = """
CREATE TABLE raw_pages (
    provider        VARCHAR NOT NULL,
    url             VARCHAR NOT NULL,
    snapshot_date   DATE NOT NULL,
    fetched_at      TIMESTAMPTZ NOT NULL,
    http_status     INTEGER,
    etag            VARCHAR,
    last_modified   VARCHAR,
    sha256          VARCHAR NOT NULL,
    bytes           BIGINT NOT NULL,
    stored_path     VARCHAR NOT NULL,
    parser_version  VARCHAR
);
CREATE TABLE price_snapshots (
    snapshot_date          DATE NOT NULL,
    provider               VARCHAR NOT NULL,
    sku                    VARCHAR NOT NULL,
    gpu                    VARCHAR NOT NULL,
    gpu_raw                VARCHAR NOT NULL,
    gpu_count              INTEGER NOT NULL,
    vram_gb                DOUBLE,
    tier                   VARCHAR NOT NULL,
    community              BOOLEAN NOT NULL,
    commitment_months      INTEGER,
    region                 VARCHAR,
    usd_per_gpu_hour       DECIMAL(12, 4) NOT NULL,
    usd_per_instance_hour  DECIMAL(14, 4),
    vcpus                  DOUBLE,
    ram_gb                 DOUBLE,
    storage_gb             DOUBLE,
    available              BOOLEAN,
    effective_from         DATE,
    source                 VARCHAR NOT NULL,
    raw_sha256             VARCHAR,
    parser_version         VARCHAR,
    ingested_at            TIMESTAMPTZ NOT NULL
);
CREATE TABLE quarantine (
    snapshot_date   DATE,
    provider        VARCHAR NOT NULL,
    raw_row         VARCHAR NOT NULL,
    reason          VARCHAR NOT NULL,
    raw_sha256      VARCHAR,
    source          VARCHAR NOT NULL,
    quarantined_at  TIMESTAMPTZ NOT NULL
);
CREATE TABLE dim_gpu (
    slug                   VARCHAR PRIMARY KEY,
    vendor                 VARCHAR NOT NULL,
    architecture           VARCHAR NOT NULL,
    memory_gb              DOUBLE NOT NULL,
    memory_bandwidth_tbps  DOUBLE,
    dense_bf16_tflops      DOUBLE,
    dense_fp8_tflops       DOUBLE,
    form_factor            VARCHAR NOT NULL,
    nvlink_gbps            DOUBLE,
    ecc                    BOOLEAN,
    tdp_w                  DOUBLE,
    release_year           INTEGER,
    source_url             VARCHAR
);
"""


def _v2(con: duckdb.DuckDBPyConnection) -> None:
    """Runpod's list and cheapest-now prices kept apart; per-provider run status (staleness)."""
    con.execute("ALTER TABLE price_snapshots ADD COLUMN price_basis VARCHAR DEFAULT 'list'")
    con.execute("UPDATE price_snapshots SET price_basis = 'list' WHERE price_basis IS NULL")
    con.execute(
        engine_ddl(
            con,
            """
        CREATE TABLE provider_runs (
            snapshot_date   DATE NOT NULL,
            provider        VARCHAR NOT NULL,
            source          VARCHAR NOT NULL,
            status          VARCHAR NOT NULL,      -- 'success' or 'failed'
            offers          INTEGER NOT NULL,
            rejected        INTEGER NOT NULL,
            unknown_gpus    INTEGER NOT NULL,
            error           VARCHAR,
            parse_report    JSON,
            started_at      TIMESTAMPTZ NOT NULL,
            finished_at     TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (snapshot_date, provider)
        )
        """,
        )
    )
    # Snapshots written before runs were tracked count as successful runs (latest_prices reads these).
    con.execute(
        """
        INSERT INTO provider_runs
        SELECT snapshot_date, provider, any_value(source), 'success', count(*), 0, 0, NULL, NULL,
               min(ingested_at), max(ingested_at)
        FROM price_snapshots WHERE source IN ('scrape', 'archive') GROUP BY snapshot_date, provider
        """
    )


def _v3(con: duckdb.DuckDBPyConnection) -> None:
    """Model outputs: memory-fit sweep and per-workload rankings."""
    con.execute(
        """
        CREATE TABLE memory_fit (
            workload        VARCHAR NOT NULL,
            gpu             VARCHAR NOT NULL,
            gpu_count       INTEGER NOT NULL,
            sharding        VARCHAR NOT NULL,
            per_gpu_gb      DOUBLE NOT NULL,
            planning_gb     DOUBLE NOT NULL,
            gpu_memory_gb   DOUBLE NOT NULL,
            fits            BOOLEAN NOT NULL,
            headroom_gb     DOUBLE NOT NULL,
            least_complex   BOOLEAN NOT NULL,
            computed_at     TIMESTAMPTZ NOT NULL
        )
        """
    )
    con.execute(
        """
        CREATE TABLE workload_rankings (
            snapshot_date            DATE NOT NULL,
            workload                 VARCHAR NOT NULL,
            rank                     INTEGER NOT NULL,
            provider                 VARCHAR NOT NULL,
            sku                      VARCHAR NOT NULL,
            gpu                      VARCHAR NOT NULL,
            gpu_count                INTEGER NOT NULL,
            nodes                    INTEGER NOT NULL,
            tier                     VARCHAR NOT NULL,
            community                BOOLEAN NOT NULL,
            commitment_months        INTEGER,
            price_basis              VARCHAR,
            usd_per_gpu_hour         DOUBLE NOT NULL,
            sharding                 VARCHAR NOT NULL,
            per_gpu_gb               DOUBLE NOT NULL,
            tokens_per_sec_per_gpu   DOUBLE NOT NULL,
            mfu                      DOUBLE NOT NULL,
            hours                    DOUBLE NOT NULL,
            run_cost_usd             DOUBLE NOT NULL,
            cost_per_checkpoint_usd  DOUBLE NOT NULL,
            cost_terms               JSON,
            warnings                 VARCHAR[],
            price_snapshot_date      DATE,
            computed_at              TIMESTAMPTZ NOT NULL
        )
        """
    )


# The date in an archived page's name ("archive://lambda/2026-08-30.html"): the page's own date.
ARCHIVE_PAGE_DATE_SQL = (
    r"TRY_CAST(regexp_extract({url}, '([0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}})\.(html|json)', 1) AS DATE)"
)
BUNDLED_SOURCE_FILE = "bundled:observed_prices.csv"

_NEBIUS_FROM_NOTE = "'from' prices (lowest host variant): "


def _v4(con: duckdb.DuckDBPyConnection) -> None:
    """Honest data: the date each price was observed, where each row came from, 'from' floors.

    ``observed_on`` is the date of the page the price was read from (a replayed archive page
    keeps its own date; a public report its citation date); ``source_file`` tells the bundled
    public-report file from a user's import (and names the page of a scrape). Idempotent, and
    safe on top of any earlier version: every step checks before it changes.
    """
    con.execute("ALTER TABLE price_snapshots ADD COLUMN IF NOT EXISTS observed_on DATE")
    con.execute("ALTER TABLE price_snapshots ADD COLUMN IF NOT EXISTS source_file VARCHAR")
    con.execute("ALTER TABLE provider_runs ADD COLUMN IF NOT EXISTS observed_on DATE")
    page_date = ARCHIVE_PAGE_DATE_SQL.format(url="url")
    # Archive replays: the page named in raw_pages (same provider, date and content hash).
    con.execute(
        f"""
        UPDATE price_snapshots p SET observed_on = pages.page_date, source_file = pages.url
        FROM (
            SELECT provider, snapshot_date, sha256, min({page_date}) AS page_date, min(url) AS url
            FROM raw_pages WHERE url LIKE 'archive://%' GROUP BY ALL
        ) pages
        WHERE p.observed_on IS NULL AND p.source = 'archive' AND pages.provider = p.provider
          AND pages.snapshot_date = p.snapshot_date AND pages.sha256 = p.raw_sha256
          AND pages.page_date IS NOT NULL
        """
    )
    # Everything else was observed on its snapshot date (a live scrape, a cited report).
    con.execute("UPDATE price_snapshots SET observed_on = snapshot_date WHERE observed_on IS NULL")
    con.execute(
        "UPDATE price_snapshots SET source_file = ? WHERE source = 'public_report' AND source_file IS NULL",
        [BUNDLED_SOURCE_FILE],
    )
    con.execute(
        """
        UPDATE provider_runs r SET observed_on = s.observed_on
        FROM (SELECT provider, snapshot_date, max(observed_on) AS observed_on FROM price_snapshots
              WHERE source IN ('scrape', 'archive') GROUP BY ALL) s
        WHERE r.observed_on IS NULL AND r.status = 'success'
          AND s.provider = r.provider AND s.snapshot_date = r.snapshot_date
        """
    )
    # Floors: cited "from $x" tiers, and the rows Nebius' parse report listed as 'from' prices.
    con.execute(
        "UPDATE price_snapshots SET price_basis = 'from'"
        " WHERE source = 'public_report' AND price_basis = 'list' AND sku LIKE '%!_from]' ESCAPE '!'"
    )
    con.execute(
        """
        UPDATE price_snapshots p SET price_basis = 'from'
        FROM provider_runs r
        WHERE p.price_basis = 'list' AND p.source IN ('scrape', 'archive')
          AND r.provider = p.provider AND r.snapshot_date = p.snapshot_date AND r.parse_report IS NOT NULL
          AND EXISTS (
            SELECT 1 FROM unnest(CAST(json_extract_string(r.parse_report, '$.notes[*]') AS VARCHAR[])) AS n(note)
            WHERE starts_with(note, ?)
              AND list_contains(string_split(substr(note, length(?) + 1), '; '), p.sku)
          )
        """,
        [_NEBIUS_FROM_NOTE, _NEBIUS_FROM_NOTE],
    )


def _v5(con: duckdb.DuckDBPyConnection) -> None:
    """Rankings carry the run's total cost, when each price was observed and the limits an offer
    breaks (planner). Idempotent, so it applies on top of any earlier version."""
    for column, kind in (
        ("total_cost_usd", "DOUBLE"),
        ("observed_on", "DATE"),
        ("excluded_by", "VARCHAR[]"),
    ):
        con.execute(f"ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS {column} {kind}")
    # Rows ranked before: the total is in cost_terms, and the price was seen on its snapshot date.
    con.execute(
        """
        UPDATE workload_rankings
        SET total_cost_usd = coalesce(total_cost_usd, TRY_CAST(json_extract(cost_terms, '$.total_usd') AS DOUBLE)),
            observed_on = coalesce(observed_on, price_snapshot_date)
        """
    )


def _v8(con: duckdb.DuckDBPyConnection) -> None:
    """Which reader produced a provider's offers (structured or the fallback extractor).

    Idempotent, so it applies on top of any earlier version (versions 6-7 belong to other work)."""
    con.execute(
        "ALTER TABLE provider_runs ADD COLUMN IF NOT EXISTS parse_strategy VARCHAR DEFAULT 'structured'"
    )
    con.execute("UPDATE provider_runs SET parse_strategy = 'structured' WHERE parse_strategy IS NULL")


def _v9(con: duckdb.DuckDBPyConnection) -> None:
    """Availability beyond a yes/no, and AWS's spot interruption bucket, per snapshot row.

    ``capacity``: how much the source says is rentable now (Runpod's largest available GPU
    count, the number of Vast.ai listings behind a statistic); ``interruption_bucket``: the Spot
    Instance Advisor's label ("<5%" ... ">20%") of an AWS spot offer. Both NULL where unstated.
    Idempotent like _v8."""
    con.execute("ALTER TABLE price_snapshots ADD COLUMN IF NOT EXISTS capacity INTEGER")
    con.execute("ALTER TABLE price_snapshots ADD COLUMN IF NOT EXISTS interruption_bucket VARCHAR")
    # Rankings say where the offer runs (its cheapest region) and the spot rate they costed.
    con.execute("ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS region VARCHAR")
    con.execute("ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS preemption_rate_per_node_hour DOUBLE")
    con.execute("ALTER TABLE workload_rankings ADD COLUMN IF NOT EXISTS preemption_rate_source VARCHAR")


def _v10(con: duckdb.DuckDBPyConnection) -> None:
    """The Dagster run that recorded a provider's outcome: the CLI reads its runs' outcomes by it.
    NULL for rows recorded before (or outside a run). Idempotent like _v8."""
    con.execute("ALTER TABLE provider_runs ADD COLUMN IF NOT EXISTS run_id VARCHAR")


MIGRATIONS: dict[int, Callable[[duckdb.DuckDBPyConnection], None]] = {
    2: _v2,
    3: _v3,
    4: _v4,
    5: _v5,
    8: _v8,
    9: _v9,
    10: _v10,
}
SCHEMA_VERSION = max(MIGRATIONS)


def _count(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = con.execute(sql).fetchone()
    return int(row[0] or 0) if row else 0


def current_version(con: duckdb.DuckDBPyConnection) -> int:
    exists = _count(
        con,
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = 'schema_version'"
        " AND database_name = current_database()",
    )
    if not exists:
        has_tables = _count(
            con,
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'price_snapshots'"
            " AND database_name = current_database()",
        )
        return 1 if has_tables else 0
    return _count(con, "SELECT max(version) FROM schema_version")


def engine_ddl(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """``sql`` as the warehouse's engine takes it: DuckLake has no PRIMARY KEY constraints (the
    writers' delete + insert per partition keeps keys unique), so they become NOT NULL there."""
    from gpuprice.warehouse.lake import is_lake

    if not is_lake(con):
        return sql
    sql = re.sub(r",\s*PRIMARY KEY\s*\([^)]*\)", "", sql)
    return re.sub(r"\bPRIMARY KEY\b", "NOT NULL", sql)


def create_v1(con: duckdb.DuckDBPyConnection) -> None:
    """Create the first released schema (used for new warehouses and by migration tests)."""
    con.execute(engine_ddl(con, V1_DDL))


def _applied_versions(con: duckdb.DuckDBPyConnection) -> set[int] | None:
    """The versions recorded in schema_version; None when there is no such table yet."""
    try:
        return {int(v) for (v,) in con.execute("SELECT version FROM schema_version").fetchall()}
    except duckdb.CatalogException:
        return None


def migrate(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """Bring the warehouse to SCHEMA_VERSION; returns (from_version, to_version)."""
    # Every writer opens through here: a current warehouse costs one query, not five.
    applied = _applied_versions(con)
    if applied is not None and set(MIGRATIONS) <= applied and max(applied) == SCHEMA_VERSION:
        return SCHEMA_VERSION, SCHEMA_VERSION
    start = current_version(con)
    if start > SCHEMA_VERSION:
        raise RuntimeError(
            f"warehouse schema version {start} is newer than this gpuprice ({SCHEMA_VERSION}); upgrade gpuprice"
        )
    version = start
    if version == 0:
        con.execute("BEGIN")
        create_v1(con)
        con.execute("COMMIT")
        version = 1
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
    )
    if _count(con, "SELECT count(*) FROM schema_version") == 0:
        con.execute("INSERT INTO schema_version VALUES (?, now())", [version])
    # Versions are reserved per feature, so a build may lack a number in between, and a warehouse
    # written by a build without one (e.g. at 8 without 4) gets it later: apply every migration
    # not recorded yet (each is idempotent).
    applied = {int(v) for (v,) in con.execute("SELECT version FROM schema_version").fetchall()}
    for target in sorted(t for t in MIGRATIONS if t not in applied):
        con.execute("BEGIN")
        try:
            MIGRATIONS[target](con)
            con.execute("INSERT INTO schema_version VALUES (?, now())", [target])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
    return start, SCHEMA_VERSION
