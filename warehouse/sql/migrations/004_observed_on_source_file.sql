-- Version 4: honest data: the date each price was observed, where each row came from, 'from' floors.
--
-- observed_on is the date of the page the price was read from (a replayed archive page keeps its
-- own date; a public report its citation date); source_file tells the bundled public-report file
-- from a user's import (and names the page of a scrape). Idempotent, and safe on top of any
-- earlier version: every step checks before it changes.
-- Parameters: $bundled_source_file (the bundled public-report file's name), $nebius_from_note
-- (the note prefix Nebius' parse report lists 'from' prices under).
ALTER TABLE price_snapshots ADD COLUMN IF NOT EXISTS observed_on DATE;
ALTER TABLE price_snapshots ADD COLUMN IF NOT EXISTS source_file VARCHAR;
ALTER TABLE provider_runs ADD COLUMN IF NOT EXISTS observed_on DATE;
-- Archive replays: the page named in raw_pages (same provider, date and content hash); the date in
-- an archived page's name ("archive://lambda/2026-08-30.html") is the page's own date.
UPDATE price_snapshots p SET observed_on = pages.page_date, source_file = pages.url
FROM (
    SELECT provider, snapshot_date, sha256,
        min(TRY_CAST(regexp_extract(url, '([0-9]{4}-[0-9]{2}-[0-9]{2})\.(html|json)', 1) AS DATE)) AS page_date,
        min(url) AS url
    FROM raw_pages WHERE url LIKE 'archive://%' GROUP BY ALL
) pages
WHERE p.observed_on IS NULL AND p.source = 'archive' AND pages.provider = p.provider
  AND pages.snapshot_date = p.snapshot_date AND pages.sha256 = p.raw_sha256
  AND pages.page_date IS NOT NULL;
-- Everything else was observed on its snapshot date (a live scrape, a cited report).
UPDATE price_snapshots SET observed_on = snapshot_date WHERE observed_on IS NULL;
UPDATE price_snapshots SET source_file = $bundled_source_file WHERE source = 'public_report' AND source_file IS NULL;
UPDATE provider_runs r SET observed_on = s.observed_on
FROM (SELECT provider, snapshot_date, max(observed_on) AS observed_on FROM price_snapshots
      WHERE source IN ('scrape', 'archive') GROUP BY ALL) s
WHERE r.observed_on IS NULL AND r.status = 'success'
  AND s.provider = r.provider AND s.snapshot_date = r.snapshot_date;
-- Floors: cited "from $x" tiers, and the rows Nebius' parse report listed as 'from' prices.
UPDATE price_snapshots SET price_basis = 'from'
WHERE source = 'public_report' AND price_basis = 'list' AND sku LIKE '%!_from]' ESCAPE '!';
UPDATE price_snapshots p SET price_basis = 'from'
FROM provider_runs r
WHERE p.price_basis = 'list' AND p.source IN ('scrape', 'archive')
  AND r.provider = p.provider AND r.snapshot_date = p.snapshot_date AND r.parse_report IS NOT NULL
  AND EXISTS (
    SELECT 1 FROM unnest(CAST(json_extract_string(r.parse_report, '$.notes[*]') AS VARCHAR[])) AS n(note)
    WHERE starts_with(note, $nebius_from_note)
      AND list_contains(string_split(substr(note, length($nebius_from_note) + 1), '; '), p.sku)
  );
