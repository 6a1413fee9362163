-- The offers whose price periods (and daily rows) are computed again, and from which date: an
-- offer whose stored periods reach its provider's cutoff, or that is seen on or after it (new,
-- or back after a gap), restarts at its latest period that began before the cutoff (that
-- period's first page is unchanged, and ends the one before it), or at the cutoff itself.
-- carry: when that period's observations all came before the cutoff, its last one (last_seen);
-- the window then reads the offer's rows from that page on, not from the restart, and the
-- period computed from it is joined to the stored one (publish/carry_periods).
-- An offer's periods follow each other without overlap (each ends where the next begins), so
-- its latest period that began before the cutoff is the one that reaches it (open, or ended on
-- or after it), else its last period (ended before the cutoff: closed = true), else none. Only
-- the periods that reach a cutoff are read whole ($first, the earliest cutoff, a constant for
-- the scan); the others only for the offers none of those holds (new, or back after a gap),
-- matched on GPU and provider too (the periods are stored in that order: the scan skips the
-- row groups of other GPUs), and none when there are none. So the update reads the live
-- periods, not the history.
CREATE OR REPLACE TEMP TABLE _pub_restart AS
WITH reach AS (
    SELECT s.offer_key, s.provider, s.gpu, s.valid_from, s.last_seen, c.cutoff
    FROM _analytics_copy.main.price_periods s JOIN _pub_cut c ON c.provider = s.provider
    WHERE (s.valid_to IS NULL OR s.valid_to >= $first) AND coalesce(s.valid_to, DATE '9999-12-31') >= c.cutoff
),
affected AS (
    SELECT offer_key, provider, gpu FROM reach
    UNION
    SELECT {offer_key_text} AS offer_key, provider, gpu FROM (
        SELECT p.* FROM main.price_snapshots p JOIN _pub_cut c ON c.provider = p.provider
        WHERE p.snapshot_date >= $first AND p.snapshot_date >= c.cutoff
    )
),
held AS (
    SELECT offer_key, max(valid_from) AS restart, arg_max(last_seen, valid_from) AS last_seen, false AS closed
    FROM reach WHERE valid_from < cutoff GROUP BY offer_key
),
earlier AS (
    SELECT s.offer_key, max(s.valid_from) AS restart, arg_max(s.last_seen, s.valid_from) AS last_seen, true AS closed
    FROM _analytics_copy.main.price_periods s
    JOIN (
        SELECT a.*, c.cutoff FROM affected a JOIN _pub_cut c ON c.provider = a.provider
        ANTI JOIN held h ON h.offer_key = a.offer_key
    ) u ON u.gpu = s.gpu AND u.provider = s.provider AND u.offer_key = s.offer_key
    WHERE s.valid_from < u.cutoff
    GROUP BY s.offer_key
),
latest AS (SELECT * FROM held UNION ALL SELECT * FROM earlier)
SELECT a.offer_key, a.provider, a.gpu, coalesce(l.restart, c.cutoff) AS restart,
    CASE WHEN l.restart IS NOT NULL AND l.last_seen < c.cutoff THEN l.last_seen END AS carry,
    coalesce(l.closed, false) AS closed
FROM affected a JOIN _pub_cut c ON c.provider = a.provider LEFT JOIN latest l ON l.offer_key = a.offer_key
