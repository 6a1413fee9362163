-- A DuckLake's tables and views copied into the one DuckDB file analysts read.
COPY FROM DATABASE {identifier:lake} TO {analytics_copy}
