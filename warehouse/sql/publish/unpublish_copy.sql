-- The copy being updated in place loses its publish format first (publish_delta.reusable then
-- refuses it): a publish killed before the new state is recorded leaves a copy the next publish
-- rebuilds rather than updates from a half-written state.
UPDATE {analytics_copy}.main.publish_info SET format = NULL
