-- analytics.<name>: a thin pass-through to the main object it exposes (warehouse/views.py).
CREATE OR REPLACE VIEW analytics.{identifier:name} AS SELECT * FROM main.{identifier:source}
