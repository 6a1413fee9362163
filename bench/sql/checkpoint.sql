-- Fold the WAL into the database file once a history is generated.
CHECKPOINT
