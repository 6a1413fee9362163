-- Version 8: which reader produced a provider's offers (structured or the fallback extractor).
-- Idempotent, so it applies on top of any earlier version (versions 6-7 belong to other work).
ALTER TABLE provider_runs ADD COLUMN IF NOT EXISTS parse_strategy VARCHAR DEFAULT 'structured';
UPDATE provider_runs SET parse_strategy = 'structured' WHERE parse_strategy IS NULL;
