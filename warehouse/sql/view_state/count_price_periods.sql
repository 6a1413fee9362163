SELECT count(*) FROM main.price_periods
