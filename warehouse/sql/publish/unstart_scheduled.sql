-- Providers with a scheduled price in reach read their whole history (start NULL).
UPDATE _pub_window SET start = NULL WHERE provider IN ({include:publish/scheduled_in_reach})
