-- The warehouse schema as it stands after every migration (warehouse/sql/migrations/), whole.
--
-- The one definition of each table's columns: the writers' column lists, the Dagster table
-- schema of the snapshot assets and the test and benchmark helpers are derived from this file
-- (warehouse/tables.py); the text after ``--`` on a column's line is its description.
-- tests/test_schema_sql.py applies the migrations to an empty database and compares the result
-- with this file, so a new migration must change it too. Columns are in the order the migrations
-- leave them (later columns appended at the end).

CREATE TABLE raw_pages (
    provider        VARCHAR NOT NULL,        -- provider the page was fetched for
    url             VARCHAR NOT NULL,        -- the page's URL (archive://<provider>/<file> for a replayed page)
    snapshot_date   DATE NOT NULL,           -- the run's date the page was fetched for
    fetched_at      TIMESTAMPTZ NOT NULL,    -- when the page was fetched or replayed
    http_status     INTEGER,                 -- HTTP status of a live fetch
    etag            VARCHAR,                 -- the response's ETag
    last_modified   VARCHAR,                 -- the response's Last-Modified
    sha256          VARCHAR NOT NULL,        -- hash of the page's bytes (its name in the raw store)
    bytes           BIGINT NOT NULL,         -- size of the page
    stored_path     VARCHAR NOT NULL,        -- where the raw store keeps the page
    parser_version  VARCHAR                  -- version of the parser that read it
);

CREATE TABLE price_snapshots (
    snapshot_date          DATE NOT NULL,            -- the date a run filed the row under
    provider               VARCHAR NOT NULL,         -- provider name (scrapers/offer.py PROVIDERS)
    sku                    VARCHAR NOT NULL,         -- the provider's name for the offer, stable across days
    gpu                    VARCHAR NOT NULL,         -- catalog slug or 'unknown'
    gpu_raw                VARCHAR NOT NULL,         -- the GPU name as the page writes it
    gpu_count              INTEGER NOT NULL,         -- GPUs in one rentable unit
    vram_gb                DOUBLE,                   -- memory per GPU as the page states it
    tier                   VARCHAR NOT NULL,         -- on_demand | spot | reserved
    community              BOOLEAN NOT NULL,         -- a community (marketplace host) offer rather than the provider's own
    commitment_months      INTEGER,                  -- term of a reserved offer
    region                 VARCHAR,                  -- region the price applies to (part of the offer key)
    usd_per_gpu_hour       DECIMAL(12, 4) NOT NULL,  -- price per GPU-hour in USD
    usd_per_instance_hour  DECIMAL(14, 4),           -- price of the whole instance per hour, where stated
    vcpus                  DOUBLE,                   -- vCPUs of the instance
    ram_gb                 DOUBLE,                   -- host memory of the instance
    storage_gb             DOUBLE,                   -- local storage of the instance
    available              BOOLEAN,                  -- whether the source says it is rentable now
    effective_from         DATE,                     -- date a scheduled price takes effect
    source                 VARCHAR NOT NULL,         -- scrape | archive | public_report | catalog_history
    raw_sha256             VARCHAR,                  -- hash of the raw page the row was read from
    parser_version         VARCHAR,                  -- version of the parser that read it
    ingested_at            TIMESTAMPTZ NOT NULL,     -- when the row was written
    price_basis            VARCHAR DEFAULT 'list',   -- list | from | lowest_now | bid_floor | contract
    observed_on            DATE,                     -- date of the page the price was read from
    source_file            VARCHAR,                  -- the page (URL, archive file) or imported file
    capacity               INTEGER,                  -- how much the source says is rentable now (GPUs, listings)
    interruption_bucket    VARCHAR                   -- AWS spot interruption bucket ('<5%' ... '>20%')
);

CREATE TABLE quarantine (
    snapshot_date   DATE,                    -- the run's date (the first day seen, for imported history)
    provider        VARCHAR NOT NULL,        -- provider of the row
    raw_row         VARCHAR NOT NULL,        -- the row as text
    reason          VARCHAR NOT NULL,        -- why it is not an offer
    raw_sha256      VARCHAR,                 -- hash of the raw page it came from
    source          VARCHAR NOT NULL,        -- snapshot source or import that saw it
    quarantined_at  TIMESTAMPTZ NOT NULL     -- when it was written
);

CREATE TABLE dim_gpu (
    slug                   VARCHAR PRIMARY KEY,  -- catalog slug
    vendor                 VARCHAR NOT NULL,     -- maker
    architecture           VARCHAR NOT NULL,     -- GPU architecture
    memory_gb              DOUBLE NOT NULL,      -- memory per GPU
    memory_bandwidth_tbps  DOUBLE,               -- memory bandwidth in TB/s
    dense_bf16_tflops      DOUBLE,               -- dense BF16 TFLOPS
    dense_fp8_tflops       DOUBLE,               -- dense FP8 TFLOPS
    form_factor            VARCHAR NOT NULL,     -- sxm | pcie | nvl | superchip ...
    nvlink_gbps            DOUBLE,               -- NVLink bandwidth per GPU in GB/s
    ecc                    BOOLEAN,              -- ECC memory
    tdp_w                  DOUBLE,               -- thermal design power in W
    release_year           INTEGER,              -- year of release
    source_url             VARCHAR               -- where the specs come from
);

CREATE TABLE provider_runs (
    snapshot_date   DATE NOT NULL,           -- the run's date
    provider        VARCHAR NOT NULL,        -- provider
    source          VARCHAR NOT NULL,        -- snapshot source of the run
    status          VARCHAR NOT NULL,        -- success | failed
    offers          INTEGER NOT NULL,        -- offers loaded
    rejected        INTEGER NOT NULL,        -- rows quarantined
    unknown_gpus    INTEGER NOT NULL,        -- GPU names not in the catalog
    error           VARCHAR,                 -- why the run failed
    parse_report    JSON,                    -- the parser's report
    started_at      TIMESTAMPTZ NOT NULL,    -- when the run started
    finished_at     TIMESTAMPTZ NOT NULL,    -- when it finished
    observed_on     DATE,                    -- date of the page a successful run read
    parse_strategy  VARCHAR DEFAULT 'structured',  -- structured | fallback: the reader that produced the offers
    run_id          VARCHAR,                 -- the Dagster run that recorded it
    PRIMARY KEY (snapshot_date, provider)
);

CREATE TABLE memory_fit (
    workload        VARCHAR NOT NULL,        -- catalog workload
    gpu             VARCHAR NOT NULL,        -- catalog slug
    gpu_count       INTEGER NOT NULL,        -- GPUs
    sharding        VARCHAR NOT NULL,        -- sharding strategy
    per_gpu_gb      DOUBLE NOT NULL,         -- memory needed per GPU
    planning_gb     DOUBLE NOT NULL,         -- memory planned per GPU (with margin)
    gpu_memory_gb   DOUBLE NOT NULL,         -- memory the GPU has
    fits            BOOLEAN NOT NULL,        -- whether it fits
    headroom_gb     DOUBLE NOT NULL,         -- memory left
    least_complex   BOOLEAN NOT NULL,        -- the simplest sharding that fits
    computed_at     TIMESTAMPTZ NOT NULL     -- when it was computed
);

CREATE TABLE workload_rankings (
    snapshot_date                  DATE NOT NULL,         -- the ranking's date
    workload                       VARCHAR NOT NULL,      -- catalog workload
    rank                           INTEGER NOT NULL,      -- 1 = lowest cost per checkpoint
    provider                       VARCHAR NOT NULL,      -- provider
    sku                            VARCHAR NOT NULL,      -- the provider's name for the offer
    gpu                            VARCHAR NOT NULL,      -- catalog slug
    gpu_count                      INTEGER NOT NULL,      -- GPUs used
    nodes                          INTEGER NOT NULL,      -- nodes used
    tier                           VARCHAR NOT NULL,      -- on_demand | spot | reserved
    community                      BOOLEAN NOT NULL,      -- a community offer
    commitment_months              INTEGER,               -- term of a reserved offer
    price_basis                    VARCHAR,               -- list | from | lowest_now | bid_floor | contract
    usd_per_gpu_hour               DOUBLE NOT NULL,       -- price per GPU-hour in USD
    sharding                       VARCHAR NOT NULL,      -- sharding strategy
    per_gpu_gb                     DOUBLE NOT NULL,       -- memory needed per GPU
    tokens_per_sec_per_gpu         DOUBLE NOT NULL,       -- estimated throughput
    mfu                            DOUBLE NOT NULL,       -- model FLOPs utilisation
    hours                          DOUBLE NOT NULL,       -- run time
    run_cost_usd                   DOUBLE NOT NULL,       -- cost of the run's GPU hours
    cost_per_checkpoint_usd        DOUBLE NOT NULL,       -- cost per successful checkpoint
    cost_terms                     JSON,                  -- the cost model's terms
    warnings                       VARCHAR[],             -- warnings about the offer
    price_snapshot_date            DATE,                  -- snapshot date of the price
    computed_at                    TIMESTAMPTZ NOT NULL,  -- when it was ranked
    total_cost_usd                 DOUBLE,                -- the run's total cost
    observed_on                    DATE,                  -- date of the page the price was read from
    excluded_by                    VARCHAR[],             -- limits the offer breaks
    region                         VARCHAR,               -- where the offer runs (its cheapest region)
    preemption_rate_per_node_hour  DOUBLE,                -- spot preemption rate costed
    preemption_rate_source         VARCHAR,               -- where that rate comes from
    hours_low                      DOUBLE,                -- hours at the throughput band's fast end
    hours_high                     DOUBLE,                -- hours at the throughput band's slow end
    total_cost_low_usd             DOUBLE,                -- total cost at hours_low
    total_cost_high_usd            DOUBLE                 -- total cost at hours_high
);

CREATE TABLE schema_version (
    version     INTEGER NOT NULL,            -- a migration applied
    applied_at  TIMESTAMPTZ NOT NULL         -- when
);

CREATE TABLE partition_fingerprints (
    provider        VARCHAR NOT NULL,        -- provider of a (provider, snapshot_date) partition of price_snapshots
    snapshot_date   DATE NOT NULL,           -- its snapshot date
    row_count       BIGINT NOT NULL,         -- rows the partition holds
    first_ingested  TIMESTAMPTZ NOT NULL,    -- the earliest ingested_at of its rows
    last_ingested   TIMESTAMPTZ NOT NULL     -- the latest ingested_at of its rows
);
