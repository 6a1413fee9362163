-- Per snapshot date and offer (everything but the region): the cheapest region, named, with
-- how many regions price it. Offers without regions are their own single row.
CREATE OR REPLACE VIEW main.v_cheapest_region AS
SELECT snapshot_date, provider, sku, gpu, gpu_raw, gpu_count, tier, community, commitment_months,
    price_basis, region AS cheapest_region, usd_per_gpu_hour, usd_per_instance_hour,
    count(*) OVER w AS regions,
    max(usd_per_gpu_hour) OVER w AS dearest_region_usd_per_gpu_hour,
    observed_on, age_days, source
FROM main.v_offers_with_specs
WHERE in_force AND {price_is_current}
WINDOW w AS (PARTITION BY snapshot_date, {region_peers})
-- the rule the ranking's offers_as_of keeps too (warehouse/sql_files.py, REGION_PEERS)
QUALIFY row_number() OVER (PARTITION BY snapshot_date, {region_peers} ORDER BY {cheapest_region_order}) = 1
