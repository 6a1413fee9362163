-- The warehouse's newest snapshot date (a kept volume history grows a day per append).
SELECT max(snapshot_date) FROM price_snapshots
