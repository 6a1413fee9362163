-- The pages (their dates) on which each offer was seen with a price in force: ages count from these.
CREATE OR REPLACE VIEW main.v_offer_pages AS
SELECT DISTINCT {offer_key_text} AS offer_key, observed_on
FROM main.v_snapshots_in_force WHERE in_force
