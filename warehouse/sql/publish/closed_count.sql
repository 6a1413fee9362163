-- How many restarted offers are closed (their last stored period ended before their cutoff).
SELECT count(*) FROM _pub_restart WHERE closed
