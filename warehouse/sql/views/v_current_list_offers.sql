-- The offers the best-value views choose from: list prices in force, of GPUs in the catalog,
-- observed within MAX_PRICE_AGE_DAYS of the date (warehouse/staleness.py).
CREATE OR REPLACE VIEW main.v_current_list_offers AS
SELECT * FROM main.v_offers_with_specs
WHERE memory_gb IS NOT NULL AND in_force AND price_basis = 'list' AND {price_is_current}
