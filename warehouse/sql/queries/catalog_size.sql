SELECT count(*) FROM main.dim_gpu
