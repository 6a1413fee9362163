-- Periods appended since the copy's price_periods were last sorted, and how many there are.
SELECT (SELECT max(unsorted_periods) FROM main.publish_info) AS unsorted,
       (SELECT count(*) FROM main.price_periods) AS periods
