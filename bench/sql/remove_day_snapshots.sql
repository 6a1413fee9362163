-- One day's snapshot rows removed (the day is appended again by the figure).
DELETE FROM price_snapshots WHERE snapshot_date = $day
