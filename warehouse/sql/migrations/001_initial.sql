-- Version 1: the first released schema (kept verbatim: tests build a v1 file from it).
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
