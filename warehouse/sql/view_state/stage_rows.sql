-- A view's rows stored unsorted (the first of two steps; each spills to disk on its own).
CREATE OR REPLACE TABLE main.{identifier:staged} AS FROM main.{identifier:view}
