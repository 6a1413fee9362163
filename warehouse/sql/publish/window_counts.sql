-- What the update reads: providers taking part, offers restarted, warehouse rows in the window,
-- offers read from their carried page.
SELECT (SELECT count(*) FROM _pub_window) AS providers,
       (SELECT count(*) FROM _pub_restart) AS offers,
       (SELECT count(*) FROM {analytics_scratch}.main.price_snapshots) AS window_rows,
       (SELECT count(*) FROM _pub_restart WHERE carry IS NOT NULL) AS carried
