-- Per restarted offer, the first date whose daily rows are written again: its restart when its
-- periods that began before the cutoff changed (another start, price, basis, sku, source or end
-- before the cutoff), else the cutoff (the days before it read the same periods and pages). A
-- carried offer's days before its carried page read the same pages and the same period (joined
-- to the stored one: its start, price and basis): they are written from that page at most (their
-- sku and source relabelled, publish/carry_relabel).
CREATE TABLE main.daily_from AS
WITH n AS (
    SELECT p.offer_key,
        CASE WHEN p.valid_from = r.carry THEN r.restart ELSE p.valid_from END AS valid_from,
        p.usd_per_gpu_hour, p.price_basis, p.sku, p.gpu_raw, p.source,
        least(coalesce(p.valid_to, DATE '9999-12-31'), r.cutoff) AS until
    FROM main.new_periods p JOIN main.restart r ON r.offer_key = p.offer_key
    WHERE p.valid_from < r.cutoff
),
o AS (
    SELECT p.offer_key, p.valid_from, p.usd_per_gpu_hour, p.price_basis, p.sku, p.gpu_raw, p.source,
        least(coalesce(p.valid_to, DATE '9999-12-31'), r.cutoff) AS until
    FROM main.old_periods p JOIN main.restart r ON r.offer_key = p.offer_key
    WHERE p.valid_from >= r.restart AND p.valid_from < r.cutoff
),
differ AS (
    SELECT offer_key FROM (SELECT * FROM n EXCEPT ALL SELECT * FROM o)
    UNION
    SELECT offer_key FROM (SELECT * FROM o EXCEPT ALL SELECT * FROM n)
)
SELECT r.offer_key,
    CASE WHEN d.offer_key IS NULL THEN r.cutoff ELSE coalesce(r.carry, r.restart) END AS daily_from
FROM main.restart r LEFT JOIN differ d ON d.offer_key = r.offer_key
