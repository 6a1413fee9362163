-- No progress bar on a benchmark's connection (its output is the figures).
SET enable_progress_bar = false
