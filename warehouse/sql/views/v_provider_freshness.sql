-- Per provider: its freshness (macros/provider_freshness.sql) as of the newest snapshot date in
-- the warehouse (the one notion of "now").
CREATE OR REPLACE VIEW main.v_provider_freshness AS
SELECT * FROM main.provider_freshness((SELECT max(snapshot_date) FROM main.provider_runs))
