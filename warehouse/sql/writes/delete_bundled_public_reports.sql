-- The bundled public-report history (reloaded whole; rows a user imported are never touched).
DELETE FROM price_snapshots WHERE source = 'public_report' AND source_file = $bundled_source_file
