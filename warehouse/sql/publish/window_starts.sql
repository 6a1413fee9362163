-- Per provider taking part: where its window of warehouse rows would start if every offer were
-- read from its restart (its earliest restart), or NULL (its whole history) when a scheduled
-- price is among the changed rows. publish/window_carry moves it to where the rows are read from.
CREATE OR REPLACE TEMP TABLE _pub_window AS
SELECT c.provider, CASE WHEN c.scheduled THEN NULL ELSE least(c.cutoff, min(r.restart)) END AS start
FROM _pub_cut c LEFT JOIN _pub_restart r ON r.provider = c.provider
GROUP BY c.provider, c.cutoff, c.scheduled
