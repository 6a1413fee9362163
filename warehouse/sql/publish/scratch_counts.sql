-- What the scratch computation wrote: periods and daily rows.
SELECT (SELECT count(*) FROM main.new_periods) AS periods, (SELECT count(*) FROM main.new_daily) AS daily
