-- Per provider, as of $day (macros/provider_freshness.sql): its newest success, the date of that
-- page, the latest attempt's status and error.
SELECT provider, last_success_date, last_observed_on, last_attempt_date, last_offers, parse_strategy, rejected,
    last_status, last_error
FROM main.provider_freshness($day) ORDER BY provider
