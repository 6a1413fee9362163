-- Carried offers whose first period did not come out at their carried page (their stored
-- period cannot be continued: the copy is then built another way).
SELECT count(*) FROM main.restart r
WHERE r.carry IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM main.new_periods p WHERE p.offer_key = r.offer_key AND p.valid_from = r.carry)
