-- The chunk's rows into the scratch database.
INSERT INTO {analytics_scratch}.main.price_snapshots BY NAME
SELECT p.* FROM main.price_snapshots p
SEMI JOIN _whole_chunk c ON c.provider = p.provider AND c.region IS NOT DISTINCT FROM p.region
