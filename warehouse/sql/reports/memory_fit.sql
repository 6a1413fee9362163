SELECT gpu, gpu_count, sharding, per_gpu_gb, planning_gb, gpu_memory_gb, fits, headroom_gb,
    least_complex, computed_at
FROM memory_fit WHERE workload = ?
QUALIFY row_number() OVER (PARTITION BY gpu, gpu_count, sharding ORDER BY computed_at DESC) = 1
ORDER BY gpu_memory_gb, gpu, gpu_count, sharding
