-- Every snapshot row, flagged ``in_force`` when it is the price that applies on its date:
-- a scheduled price ("Effective October 1") replaces the current one once its date has
-- come, and imported history (a cited public report, a catalog's history) is only used for
-- a provider and date without a scrape: the product's own scrape wins its day.
CREATE OR REPLACE VIEW main.v_snapshots_in_force AS
WITH scraped AS (
    SELECT DISTINCT provider, snapshot_date FROM main.provider_runs WHERE status = 'success'
),
flagged AS (
    -- rows written without a page date (hand-built warehouses) were observed on their date
    SELECT p.* REPLACE (coalesce(p.observed_on, p.snapshot_date) AS observed_on),
        ((p.effective_from IS NULL OR p.effective_from <= p.snapshot_date)
         AND (p.source IN {scraped_sources} OR s.provider IS NULL)) AS eligible
    FROM main.price_snapshots p
    LEFT JOIN scraped s ON s.provider = p.provider AND s.snapshot_date = p.snapshot_date
)
SELECT * EXCLUDE (eligible),
    eligible AND row_number() OVER (
        PARTITION BY snapshot_date, {snapshot_row_key}, source, eligible
        ORDER BY effective_from DESC NULLS LAST
    ) = 1 AS in_force
FROM flagged
