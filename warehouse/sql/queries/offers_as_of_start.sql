-- The oldest snapshot offers_as_of_range reads for $first..$last: each provider's newest dated
-- snapshot at or before $first, the oldest of them (a constant bound, so the in-force window skips
-- the history before it).
WITH dated AS ({include:queries/offer_dates})
SELECT min(snapshot_date) FROM (
    SELECT provider, max(snapshot_date) AS snapshot_date FROM dated
    WHERE snapshot_date <= $first GROUP BY provider
)
