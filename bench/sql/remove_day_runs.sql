-- One day's provider runs removed (the day is appended again by the figure).
DELETE FROM provider_runs WHERE snapshot_date = $day
