-- Version 2: Runpod's list and cheapest-now prices kept apart; per-provider run status (staleness).
ALTER TABLE price_snapshots ADD COLUMN price_basis VARCHAR DEFAULT 'list';
UPDATE price_snapshots SET price_basis = 'list' WHERE price_basis IS NULL;
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
);
-- Snapshots written before runs were tracked count as successful runs (latest_prices reads these).
INSERT INTO provider_runs
SELECT snapshot_date, provider, any_value(source), 'success', count(*), 0, 0, NULL, NULL,
       min(ingested_at), max(ingested_at)
FROM price_snapshots WHERE source IN ('scrape', 'archive') GROUP BY snapshot_date, provider;
