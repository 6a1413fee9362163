-- The analysts' standard query: every provider's newest offers.
SELECT * FROM analytics.latest_prices
