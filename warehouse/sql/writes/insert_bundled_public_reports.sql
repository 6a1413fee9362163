-- The bundled public-report history (registered as _incoming_public), except rows whose natural
-- key (history_writes.PUBLIC_REPORT_KEY) a user's import already holds: the user's figure stands.
INSERT INTO price_snapshots ({columns:price_snapshots})
SELECT {columns:price_snapshots} FROM _incoming_public i WHERE NOT EXISTS (
    SELECT 1 FROM price_snapshots p
    WHERE p.source = $source AND row({identifiers:key:p}) = row({identifiers:key:i})
)
