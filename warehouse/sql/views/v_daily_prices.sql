-- Each offer's price in force on every day from its first observation to the newest
-- snapshot date (last observation carried forward), with the date of the page it was last
-- read from and that page's age in days. Analysts filter on age_days; the best-offer views
-- below keep current prices only (warehouse/staleness.py).
CREATE OR REPLACE VIEW main.v_daily_prices AS
WITH newest AS (SELECT max(snapshot_date) AS d FROM main.price_snapshots),
days AS (
    SELECT h.* EXCLUDE (valid_to), h.valid_to,
        CAST(unnest(generate_series(
            CAST(h.valid_from AS TIMESTAMP),
            CAST(least(coalesce(h.valid_to - 1, (SELECT d FROM newest)), (SELECT d FROM newest)) AS TIMESTAMP),
            INTERVAL 1 DAY)) AS DATE) AS date
    FROM main.v_price_history h
    WHERE h.valid_from <= (SELECT d FROM newest)
)
SELECT d.date, d.offer_key, d.provider, d.gpu, d.gpu_count, d.tier, d.community,
    d.commitment_months, d.region, d.price_basis, d.usd_per_gpu_hour, o.observed_on,
    -- a scheduled price read on a later page applies from its date: age 0, not negative
    greatest(d.date - o.observed_on, 0) AS age_days, d.sku, d.gpu_raw, d.source, d.valid_from
FROM days d
ASOF LEFT JOIN main.v_offer_pages o ON o.offer_key = d.offer_key AND d.date >= o.observed_on
