-- The newest date moved on from $old_newest: every provider with an open period (its price is
-- carried forward to the new newest date) takes part, from the day after.
INSERT INTO _pub_cut
SELECT DISTINCT provider, CAST($old_newest AS DATE) + 1, false
FROM _analytics_copy.main.price_periods
WHERE coalesce(valid_to, DATE '9999-12-31') > $old_newest AND provider NOT IN (SELECT provider FROM _pub_cut)
