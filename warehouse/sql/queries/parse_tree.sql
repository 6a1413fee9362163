-- DuckDB's parse tree of one statement as JSON (an error object for anything but a SELECT tree).
SELECT json_serialize_sql($text)
