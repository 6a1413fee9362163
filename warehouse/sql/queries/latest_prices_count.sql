SELECT count(*) FROM main.v_latest_prices
