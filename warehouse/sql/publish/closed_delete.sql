-- In the copy, the closed offers' periods publish/closed_periods read (ended before the earliest
-- cutoff, from the offer's restart on), replaced with the rest. Run only when there are any.
DELETE FROM _analytics_copy.main.price_periods t
WHERE t.valid_to < $cutoff
  AND EXISTS (
    SELECT 1 FROM _pub_restart r
    WHERE r.closed AND r.gpu = t.gpu AND r.provider = t.provider AND r.offer_key = t.offer_key AND t.valid_from >= r.restart
  )
