-- Folds the write-ahead log into the database file, so the file alone is complete.
CHECKPOINT
