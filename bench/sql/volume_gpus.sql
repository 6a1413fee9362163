-- The GPUs the volume history prices (bench.synthetic_history's table, registered as a frame).
CREATE OR REPLACE TEMP TABLE _volume_gpus AS SELECT * FROM _volume_gpu_frame
