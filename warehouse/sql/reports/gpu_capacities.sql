SELECT slug AS gpu, memory_gb FROM dim_gpu WHERE list_contains(?, slug) ORDER BY memory_gb, slug
