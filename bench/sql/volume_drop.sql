-- The volume history's work tables, once the rows are in.
DROP TABLE IF EXISTS _volume_offers;
DROP TABLE IF EXISTS _volume_gpus;
