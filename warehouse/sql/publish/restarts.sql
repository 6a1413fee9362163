-- The offers whose price periods (and daily rows) are computed again, and from which date: an
-- offer whose stored periods reach its provider's cutoff, or that is seen on or after it (new,
-- or back after a gap), restarts at its latest period that began before the cutoff (that
-- period's first page is unchanged, and ends the one before it), or at the cutoff itself.
-- carry: when that period's observations all came before the cutoff, its last one (last_seen);
-- the window then reads the offer's rows from that page on, not from the restart, and the
-- period computed from it is joined to the stored one (publish/carry_periods). $first is the
-- earliest cutoff (a constant, so the scan skips older row groups).
CREATE OR REPLACE TEMP TABLE _pub_restart AS
WITH stored AS (
    SELECT s.offer_key, s.provider, s.valid_from, s.valid_to, s.last_seen
    FROM _analytics_copy.main.price_periods s SEMI JOIN _pub_cut c ON c.provider = s.provider
),
affected AS (
    SELECT s.offer_key, s.provider FROM stored s JOIN _pub_cut c ON c.provider = s.provider
    WHERE coalesce(s.valid_to, DATE '9999-12-31') >= c.cutoff
    UNION
    SELECT {offer_key_text} AS offer_key, provider FROM (
        SELECT p.* FROM main.price_snapshots p JOIN _pub_cut c ON c.provider = p.provider
        WHERE p.snapshot_date >= $first AND p.snapshot_date >= c.cutoff
    )
),
latest AS (
    SELECT a.offer_key, a.provider, c.cutoff,
        max(s.valid_from) FILTER (WHERE s.valid_from < c.cutoff) AS restart,
        arg_max(s.last_seen, s.valid_from) FILTER (WHERE s.valid_from < c.cutoff) AS last_seen
    FROM affected a
    JOIN _pub_cut c ON c.provider = a.provider
    LEFT JOIN stored s ON s.offer_key = a.offer_key
    GROUP BY a.offer_key, a.provider, c.cutoff
)
SELECT offer_key, provider, coalesce(restart, cutoff) AS restart,
    CASE WHEN restart IS NOT NULL AND last_seen < cutoff THEN last_seen END AS carry
FROM latest
