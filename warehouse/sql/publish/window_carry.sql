-- After publish/unstart_scheduled: a provider read whole carries no period (all its rows are
-- there), and the others' windows start at their earliest carried page or restart. A scheduled
-- price anywhere from the restarts on has made its provider read whole, so every carried
-- period's observations are the pages they were read from (observed_at = observed_on).
UPDATE _pub_restart SET carry = NULL
WHERE provider IN (SELECT provider FROM _pub_window WHERE start IS NULL);
UPDATE _pub_window w SET start = (
    SELECT least(c.cutoff, min(coalesce(r.carry, r.restart)))
    FROM _pub_cut c LEFT JOIN _pub_restart r ON r.provider = c.provider
    WHERE c.provider = w.provider GROUP BY c.cutoff
)
WHERE w.start IS NOT NULL;
