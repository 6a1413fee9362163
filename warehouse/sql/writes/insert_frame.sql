-- A registered frame (_incoming) appended to a table: the columns are the table's own, from
-- warehouse/tables.py (schema.sql).
INSERT INTO {identifier:table} ({identifiers:columns}) SELECT {identifiers:columns} FROM _incoming
