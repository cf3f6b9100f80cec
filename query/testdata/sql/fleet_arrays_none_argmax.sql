-- Untiered costs with no JOIN and two SELECT levels: 18.16 re-analyses nested subqueries
-- at every level above them, so each level and each JOIN stage cost 10–20 ms there. The
-- batch's distinct price timelines (locations on one product share one; cost_arrays.sql
-- has the layout of a timeline) arrive as constant arrays, concatenated: timeline tl's
-- bucket index starts at (tl - 1) × @nb. Each record finds its location's timeline with
-- its number (li, readings.sql) and is priced against the few segments it can touch; records are
-- summed per location, device and bucket. The per-record money is a WITH list, so the sums
-- need no third level.
WITH
    arrayElement(@tl, li) AS tl,
    toUInt32((tl - 1) * @nb + intDiv(rs - @t0, @bucket) + 1) AS b0,
    toUInt32((tl - 1) * @nb + intDiv(re - 1 - @t0, @bucket) + 1) AS b1,
        -- Component 1: i1a and i1b number the segments holding the record's first
        -- and last second. Its money per kWh is the difference of the running sum of price ×
        -- seconds (the integral function, cost.go) at its end and start: a few lookups per
        -- record. Slicing the segments a record can touch and mapping lambdas over them cost
        -- more (a fleet month's 900 untiered locations replayed on 18.16, one thread: 487 ms
        -- of CPU against 456, and 353 pricing nothing).
        arrayElement(s1_first, b0) AS i1a, arrayElement(s1_first, b1) AS i1b,
        arrayElement(s1_cov, i1b) + arrayElement(s1_covers, i1b) * (re - @t0)
            - arrayElement(s1_cov, i1a) - arrayElement(s1_covers, i1a) * (rs - @t0) AS cov1,
        e / (re - rs) * ((arrayElement(s1_base, i1b) + arrayElement(s1_price, i1b) * (re - @t0)) - (arrayElement(s1_base, i1a) + arrayElement(s1_price, i1a) * (rs - @t0))) / 1000 AS m1,
        -- The least confidence of the segments i1a … i1b (a gap's is 1).
        if(cov1 > 0, least(rc, arrayReduce('min', arraySlice(s1_conf, i1a, i1b - i1a + 1))), 1.) AS c1
,
        -- Component 2: i2a and i2b number the segments holding the record's first
        -- and last second. Its money per kWh is the difference of the running sum of price ×
        -- seconds (the integral function, cost.go) at its end and start: a few lookups per
        -- record. Slicing the segments a record can touch and mapping lambdas over them cost
        -- more (a fleet month's 900 untiered locations replayed on 18.16, one thread: 487 ms
        -- of CPU against 456, and 353 pricing nothing).
        arrayElement(s2_first, b0) AS i2a, arrayElement(s2_first, b1) AS i2b,
        arrayElement(s2_cov, i2b) + arrayElement(s2_covers, i2b) * (re - @t0)
            - arrayElement(s2_cov, i2a) - arrayElement(s2_covers, i2a) * (rs - @t0) AS cov2,
        e / (re - rs) * ((arrayElement(s2_base, i2b) + arrayElement(s2_price, i2b) * (re - @t0)) - (arrayElement(s2_base, i2a) + arrayElement(s2_price, i2a) * (rs - @t0))) / 1000 AS m2,
        -- The least confidence of the segments i2a … i2b (a gap's is 1).
        if(cov2 > 0, least(rc, arrayReduce('min', arraySlice(s2_conf, i2a, i2b - i2a + 1))), 1.) AS c2
,
        -- No segment of component 3: nothing to pay and nothing covered (@tl_bits says
        -- whether the component has tariffs, so whether uncovered time lowers confidence).
        0. AS m3, toInt64(0) AS cov3, 1. AS c3
,
    multiIf(tr = 1, m1, tr = 2, m3, 0.) AS m_com, if(tr = 1, m2, 0.) AS m_non,
    least(rc, multiIf(tr = 1, least(c1, c2), tr = 2, c3, 1.)) AS conf
SELECT li, '' AS gdev, toUInt32(0) AS k, toUInt32(0) AS kend, toUInt8(0) AS ktr, '' AS ksess, '' AS kref,
    -- Every aggregate costs each record a call (a fleet month on 18.16: ~5 ms each), so a
    -- component no timeline has is summed as the constant it is, and which components have
    -- tariffs (part of the price key: one bit set per timeline, @tl_bits) is read of the
    -- group's timeline, not aggregated.
    sum(e) AS energy, sum(m_com) + sum(m_non) AS money, sum(m_com) AS money_com,
    sum(m_non) AS money_non,
    least(min(conf), if((bitAnd(arrayElement(@tl_bits, tl), 1) != 0 AND sumIf(re - rs, tr = 1) > sumIf(cov1, tr = 1)) OR (bitAnd(arrayElement(@tl_bits, tl), 2) != 0 AND sumIf(re - rs, tr = 1) > sumIf(cov2, tr = 1)) OR (bitAnd(arrayElement(@tl_bits, tl), 4) != 0 AND sumIf(re - rs, tr = 2) > 0), 0., 1.)) AS confidence,
    countIf(tr = 1) AS n_import, countIf(tr = 2) AS n_export, max(re) AS reach,
    toUInt8(0) AS dirty
FROM
(
    -- The readings: the latest version of each, by argMax (small batches, one
    -- location: on 18.16 FINAL made one location's month ~8x slower, 105–215 ms against 18 ms).
    SELECT location_id AS loc, transform(loc, @act_loc, @act_n, toUInt32(0)) AS li, device_id AS dev, toString(direction) AS dir,
        toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
        toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
        argMax(energy_wh, version) AS e, argMax(confidence, version) AS rc,
        -- The arrays enter as columns: 18.16 spells a literal out in the name of every
        -- expression built on it, and those names made analysis slow.
            @s1_price AS s1_price, @s1_base AS s1_base, @s1_first AS s1_first, @s1_cov AS s1_cov, @s1_covers AS s1_covers, @s1_conf AS s1_conf,
        -- The arrays enter as columns: 18.16 spells a literal out in the name of every
        -- expression built on it, and those names made analysis slow.
            @s2_price AS s2_price, @s2_base AS s2_base, @s2_first AS s2_first, @s2_cov AS s2_cov, @s2_covers AS s2_covers, @s2_conf AS s2_conf
    FROM meter_records
    -- The locations first: where they are a few of those in the granules read (a tiered
    -- batch of every tenth location), the other columns are read for their rows only (a
    -- fleet month's 100 tiered locations on 18.16: 56-72 ms of CPU reading, 76-90 ms in WHERE).
    PREWHERE location_id IN @locs
    -- The scope narrows the key range read, and is not compared row by row: a record's
    -- location is always its own scope's (ingest refuses any other, and ids are random,
    -- never reused), and @locs are the scope's own, so location_id IN @locs keeps the
    -- rows to the scope (docs/costs.md, "Scope of a cost query"). On 18.16 the comparison
    -- took 65 of 380 ms of a cold fleet month's untiered statement on one thread.
    WHERE indexHint(account_id = @account AND live_mode = @live)
        AND device_id = ''
        AND direction = @dir
        AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w1)
    GROUP BY location_id, device_id, direction, tariff_rate, start_time, end_time
)
GROUP BY li, k, kend, ktr
ORDER BY li, gdev, k, kend, ktr
