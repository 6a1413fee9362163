-- DuckDB's working memory for this database instance (a size: SET binds no parameter).
SET memory_limit = {literal:limit}
