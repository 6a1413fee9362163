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

    Idempotent, so it applies on top of any earlier version (versions 4-7 belong to other work)."""
    con.execute(
        "ALTER TABLE provider_runs ADD COLUMN IF NOT EXISTS parse_strategy VARCHAR DEFAULT 'structured'"
    )
    con.execute("UPDATE provider_runs SET parse_strategy = 'structured' WHERE parse_strategy IS NULL")


MIGRATIONS: dict[int, Callable[[duckdb.DuckDBPyConnection], None]] = {2: _v2, 3: _v3, 5: _v5, 8: _v8}
SCHEMA_VERSION = max(MIGRATIONS)


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> object:
    row = con.execute(sql).fetchone()
    return row[0] if row is not None else None


def current_version(con: duckdb.DuckDBPyConnection) -> int:
    exists = _scalar(
        con,
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = 'schema_version'"
        " AND database_name = current_database()",
    )
    if not exists:
        has_tables = _scalar(
            con,
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'price_snapshots'"
            " AND database_name = current_database()",
        )
        return 1 if has_tables else 0
    version = _scalar(con, "SELECT max(version) FROM schema_version")
    return int(version or 0)  # type: ignore[call-overload]


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


def migrate(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """Bring the warehouse to SCHEMA_VERSION; returns (from_version, to_version)."""
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
    if _scalar(con, "SELECT count(*) FROM schema_version") == 0:
        con.execute("INSERT INTO schema_version VALUES (?, now())", [version])
    # Versions are reserved per feature (schema.md), so a build may lack a number in between.
    for target in sorted(t for t in MIGRATIONS if t > version):
        con.execute("BEGIN")
        try:
            MIGRATIONS[target](con)
            con.execute("INSERT INTO schema_version VALUES (?, now())", [target])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
    return start, SCHEMA_VERSION
