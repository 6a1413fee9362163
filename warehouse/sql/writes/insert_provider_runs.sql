-- One provider_runs row, in the table's column order (warehouse/writes.py _provider_run_row).
INSERT INTO provider_runs ({columns:provider_runs}) VALUES ({markers:provider_runs})
