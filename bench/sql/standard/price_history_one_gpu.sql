-- The analysts' standard query: one GPU's price periods.
SELECT * FROM analytics.price_history WHERE gpu = $gpu
