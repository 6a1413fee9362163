-- Per provider with a changed partition: the earliest date its derived rows can change (the
-- changed partitions' dates, their pages' dates and scheduled prices' dates, before and after
-- the change), and whether any of those rows carries a scheduled price. $lo and $hi bound the
-- changed dates (constants: the scans skip the row groups outside them).
CREATE OR REPLACE TEMP TABLE _pub_cut AS
WITH touched AS (
    SELECT p.provider,
        least(p.snapshot_date, coalesce(p.observed_on, p.snapshot_date), coalesce(p.effective_from, p.snapshot_date)) AS d,
        p.effective_from IS NOT NULL AS scheduled
    FROM main.price_snapshots p SEMI JOIN _pub_changed c ON c.provider = p.provider AND c.snapshot_date = p.snapshot_date
    WHERE p.snapshot_date BETWEEN $lo AND $hi
    UNION ALL
    SELECT p.provider,
        least(p.snapshot_date, coalesce(p.observed_on, p.snapshot_date), coalesce(p.effective_from, p.snapshot_date)),
        p.effective_from IS NOT NULL
    FROM _analytics_copy.main.price_snapshots p
    SEMI JOIN _pub_changed c ON c.provider = p.provider AND c.snapshot_date = p.snapshot_date
    WHERE p.snapshot_date BETWEEN $lo AND $hi
    UNION ALL
    SELECT provider, snapshot_date, false FROM _pub_changed
)
SELECT provider, min(d) AS cutoff, bool_or(scheduled) AS scheduled FROM touched GROUP BY provider
