-- The chunk's offers (the markers added after are none of them).
CREATE TABLE {analytics_scratch}.main.chunk_offers AS
SELECT DISTINCT {offer_key_text} AS offer_key FROM {analytics_scratch}.main.price_snapshots
