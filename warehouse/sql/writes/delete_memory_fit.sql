DELETE FROM memory_fit
