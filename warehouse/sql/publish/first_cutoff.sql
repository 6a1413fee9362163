-- The earliest cutoff of any provider: no offer restarts before it.
SELECT min(cutoff) FROM _pub_cut
