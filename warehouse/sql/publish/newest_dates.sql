-- The newest snapshot date the copy was published from, and the warehouse's now.
SELECT (SELECT max(snapshot_date) FROM {analytics_copy}.main.published_partitions) AS old_newest,
       (SELECT max(snapshot_date) FROM _pub_now) AS new_newest
