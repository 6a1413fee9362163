-- How many partitions changed, and how many providers have derived rows to compute again.
SELECT (SELECT count(*) FROM _pub_changed) AS partitions, (SELECT count(*) FROM _pub_cut) AS providers
