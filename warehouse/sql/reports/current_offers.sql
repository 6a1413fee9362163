WITH current AS (
    SELECT provider, snapshot_date, scraped FROM (
        SELECT provider, snapshot_date, scraped,
            row_number() OVER (PARTITION BY provider ORDER BY scraped DESC, snapshot_date DESC) AS pick
        FROM (
            SELECT DISTINCT provider, snapshot_date, source IN {scraped_sources} AS scraped
            FROM price_snapshots WHERE snapshot_date <= $end
        )
    ) WHERE pick = 1
)
    SELECT p.snapshot_date, p.provider, p.sku, p.gpu, p.gpu_raw, p.gpu_count, p.tier, p.community,
        p.commitment_months, p.region, p.price_basis, CAST(p.usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour,
        p.source, p.observed_on
    FROM price_snapshots p JOIN current c USING (provider, snapshot_date)
    WHERE (p.source IN {scraped_sources}) = c.scraped  -- a public report dated that day is history only
      AND coalesce(p.effective_from, p.snapshot_date) <= $end
    QUALIFY row_number() OVER (
        PARTITION BY p.provider, p.sku, p.gpu_count, p.tier, p.community, p.commitment_months, p.region, p.price_basis
        ORDER BY coalesce(p.effective_from, p.snapshot_date) DESC
    ) = 1
