-- One row per offer (OFFER_KEY) and time it was observed in force. The time axis is the
-- date of the page (observed_on), not the date a run filed it under: a page replayed on
-- five dates is one observation. A scheduled price counts from its effective date, but not
-- before the offer's previous page (which still showed the old price) nor its first page.
CREATE OR REPLACE VIEW main.v_offer_observations AS
WITH rows AS (
    SELECT *,
        -- the newest earlier page with this offer (a scheduled price cannot start before it)
        max(observed_on) OVER (
            PARTITION BY gpu, {offer_key} ORDER BY observed_on
            RANGE BETWEEN UNBOUNDED PRECEDING AND INTERVAL 1 DAY PRECEDING
        ) AS previous_page
    FROM main.v_snapshots_in_force
    WHERE in_force OR effective_from > snapshot_date
),
timed AS (
    SELECT {offer_key_text} AS offer_key, {offer_key}, price_basis, usd_per_gpu_hour,
        CASE
            WHEN effective_from IS NULL THEN observed_on
            WHEN effective_from > observed_on THEN effective_from
            WHEN previous_page IS NULL THEN observed_on  -- never before the offer's first page
            ELSE greatest(effective_from, previous_page + 1)
        END AS observed_at,
        observed_on, effective_from, sku, gpu_raw, source, source_file
    FROM rows
)
SELECT *,
    -- the newest page behind this observation (several pages can state one scheduled price)
    max(observed_on) OVER (PARTITION BY gpu, {offer_key}, observed_at) AS page_seen
FROM timed
QUALIFY row_number() OVER (
    PARTITION BY gpu, {offer_key}, observed_at
    ORDER BY {basis_rank}, source = 'public_report', usd_per_gpu_hour, sku, observed_on DESC
) = 1
