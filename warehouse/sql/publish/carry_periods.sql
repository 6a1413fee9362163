-- In the scratch database, after the daily rows: each carried offer's first period (computed
-- from its carried page, the stored period's last observation) joined to the stored period it
-- continues: the stored start, the observations counted once (the carried page is in both), the
-- later last page. The rows whose days before the carried page keep their dates but take the
-- continued period's sku, gpu_raw and source (the newest observation's) are kept in relabel.
UPDATE main.new_daily d SET valid_from = r.restart
FROM main.restart r
WHERE r.offer_key = d.offer_key AND r.carry IS NOT NULL AND d.valid_from = r.carry;
UPDATE main.new_periods p SET valid_from = o.valid_from, snapshots = p.snapshots + o.snapshots - 1,
    last_seen = greatest(p.last_seen, o.last_seen)
FROM main.restart r, main.old_periods o
WHERE r.offer_key = p.offer_key AND r.carry IS NOT NULL AND p.valid_from = r.carry
  AND o.offer_key = r.offer_key AND o.valid_from = r.restart;
CREATE TABLE main.relabel AS
SELECT r.offer_key, r.restart, r.carry, p.sku, p.gpu_raw, p.source
FROM main.restart r
JOIN main.new_periods p ON p.offer_key = r.offer_key AND p.valid_from = r.restart
JOIN main.old_periods o ON o.offer_key = r.offer_key AND o.valid_from = r.restart
WHERE r.carry > r.restart
  AND (p.sku IS DISTINCT FROM o.sku OR p.gpu_raw IS DISTINCT FROM o.gpu_raw OR p.source IS DISTINCT FROM o.source);
