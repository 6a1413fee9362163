-- The chunk's providers' pages (markers) and runs (which days were scraped).
INSERT INTO {analytics_scratch}.main.price_snapshots BY NAME
SELECT m.* FROM _whole_markers m WHERE m.provider IN (SELECT provider FROM _whole_chunk);
INSERT INTO {analytics_scratch}.main.provider_runs BY NAME
SELECT r.* FROM main.provider_runs r WHERE r.provider IN (SELECT provider FROM _whole_chunk);
