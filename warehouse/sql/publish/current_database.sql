-- The database the warehouse connection writes to (its file's name).
SELECT current_database()
