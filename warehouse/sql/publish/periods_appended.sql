-- How many new periods are appended to the copy (not updated in place): they are out of GPU order.
SELECT count(*) FROM main.new_periods n
ANTI JOIN main.kept_periods k ON k.offer_key = n.offer_key AND k.valid_from = n.valid_from
