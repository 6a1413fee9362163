-- The warehouse's connections' fixed settings (connection.limit_memory says why).
SET preserve_insertion_order = false;
SET asof_loop_join_threshold = 0;
