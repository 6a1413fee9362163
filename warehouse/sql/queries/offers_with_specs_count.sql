SELECT count(*) FROM main.v_offers_with_specs WHERE snapshot_date BETWEEN $first AND $last
