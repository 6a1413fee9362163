-- The (provider, region) pairs of one chunk of a whole build.
CREATE OR REPLACE TEMP TABLE _whole_chunk AS
SELECT unnest(CAST($providers AS VARCHAR[])) AS provider, unnest(CAST($regions AS VARCHAR[])) AS region
