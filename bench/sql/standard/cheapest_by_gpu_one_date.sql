-- The analysts' standard query: the cheapest offer per GPU on one date.
SELECT * FROM analytics.cheapest_by_gpu WHERE snapshot_date = $day
