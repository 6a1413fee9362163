-- The newest date moved on: every provider's cutoff is at most the day after the old newest.
UPDATE _pub_cut SET cutoff = least(cutoff, CAST($old_newest AS DATE) + 1)
