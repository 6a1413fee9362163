DELETE FROM dim_gpu
