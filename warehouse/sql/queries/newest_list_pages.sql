-- Per provider that ever listed the GPU at the tier by $day: the newest page with a list price
-- for it (the history command's "nothing current" note), oldest last.
SELECT provider, max(observed_on) AS seen FROM main.v_daily_prices
WHERE gpu = $gpu AND tier = $tier AND price_basis = 'list' AND date <= $day AND observed_on <= $day
GROUP BY provider ORDER BY seen DESC, provider
