SELECT workload, gpu, gpu_count, sharding, per_gpu_gb, planning_gb, gpu_memory_gb, fits,
    headroom_gb, least_complex
FROM memory_fit WHERE workload = ANY(?)
QUALIFY row_number() OVER (
    PARTITION BY workload, gpu, gpu_count, sharding ORDER BY computed_at DESC) = 1
ORDER BY workload, gpu_memory_gb, gpu, gpu_count, sharding
