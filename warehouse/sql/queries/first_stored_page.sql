-- The earliest date the raw_pages manifest holds a page for, among $providers.
SELECT min(snapshot_date) FROM main.raw_pages WHERE list_contains($providers, provider)
