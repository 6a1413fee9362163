-- In the scratch database, after publish/carry_periods: the new periods that continue a stored
-- one reaching $cutoff, the earliest cutoff (the same offer and start: a carried period, or one
-- computed again unchanged in its start). The copy's row is updated in place, so it keeps its
-- place in GPU order (publish/periods_update); the other new periods are appended.
CREATE TABLE main.kept_periods AS
SELECT n.* FROM main.new_periods n
SEMI JOIN main.old_periods o
  ON o.offer_key = n.offer_key AND o.valid_from = n.valid_from AND coalesce(o.valid_to, DATE '9999-12-31') >= $cutoff
