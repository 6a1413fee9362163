SELECT provider, gpu, gpu_raw, gpu_count, community, last_capacity_date, first_reported, as_of_date, window_days
FROM v_capacity_watch
ORDER BY provider, gpu, gpu_count, community
