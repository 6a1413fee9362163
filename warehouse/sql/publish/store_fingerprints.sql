-- The fingerprints an updated copy now holds: the warehouse's (_pub_now).
DELETE FROM {analytics_copy}.main.published_partitions;
INSERT INTO {analytics_copy}.main.published_partitions BY NAME SELECT * FROM _pub_now;
