-- Untiered costs with no JOIN and two SELECT levels: 18.16 re-analyses nested subqueries
-- at every level above them, so each level and each JOIN stage cost 10–20 ms there. The
-- batch's distinct price timelines (locations on one product share one; cost_arrays.sql
-- has the layout of a timeline) arrive as constant arrays, concatenated: timeline tl's
-- bucket index starts at (tl - 1) × @nb. Each record finds its location's timeline with
-- its number (fleet_li) and is priced against the few segments it can touch; records are
-- summed per location, device and bucket. The per-record money is a WITH list, so the sums
-- need no third level.
WITH
    transform(loc, @act_loc, @act_n, toUInt32(0)) AS li,
    arrayElement(@tl, li) AS tl,
    toUInt32((tl - 1) * @nb + intDiv(rs - @t0, @bucket) + 1) AS b0,
    toUInt32((tl - 1) * @nb + intDiv(re - 1 - @t0, @bucket) + 1) AS b1,
        -- Component 1: candidates are segments first[b0] … last[b1] (none when empty);
        -- o1 holds the record's seconds inside each (0: none). The money is the record's
        -- energy per second times its seconds × price summed over them: a lambda that captures
        -- a column copies it once per element (a fleet month on 18.16: ~30 ms of 420 ms CPU).
        arrayElement(s1_first, b0) AS i1, greatest(toInt64(arrayElement(s1_last, b1)) - i1 + 1, 0) AS k1,
        arrayMap((a, b) -> greatest(toInt64(least(re, b)) - toInt64(greatest(rs, a)), 0),
            arraySlice(s1_start, i1, k1), arraySlice(arrayPushBack(arraySlice(s1_start, i1 + 1, k1), toUInt32(@s1_last_end)), 1, k1)) AS o1,
        arraySum(o1) AS cov1,
        e / (re - rs) * (arraySum(arrayMap((o, p) -> o * p, o1, arraySlice(s1_price, i1, k1)))) / 1000 AS m1,
        -- One confidence for every segment: the least over the segments the record meets.
        if(cov1 > 0, least(rc, toFloat64(@s1_conf1)), 1.) AS c1
,
        -- No segment of component 2: nothing to pay and nothing covered (@tl_bits says
        -- whether the component has tariffs, so whether uncovered time lowers confidence).
        0. AS m2, toInt64(0) AS cov2, 1. AS c2
,
        -- No segment of component 3: nothing to pay and nothing covered (@tl_bits says
        -- whether the component has tariffs, so whether uncovered time lowers confidence).
        0. AS m3, toInt64(0) AS cov3, 1. AS c3
,
    multiIf(tr = 1, m1, tr = 2, m3, 0.) AS m_com, if(tr = 1, m2, 0.) AS m_non,
    least(rc, multiIf(tr = 1, least(c1, c2), tr = 2, c3, 1.)) AS conf
SELECT li, '' AS gdev, rs AS k, re AS kend, tr AS ktr, any(sess) AS ksess, any(ref) AS kref,
    -- Every aggregate costs each record a call (a fleet month on 18.16: ~5 ms each), so a
    -- component no timeline has is summed as the constant it is, and which components have
    -- tariffs (part of the price key: one bit set per timeline, @tl_bits) is read of the
    -- group's timeline, not aggregated.
    sum(e) AS energy, sum(m_com) + 0. AS money, sum(m_com) AS money_com,
    0. AS money_non,
    least(least(min(rc), if(sumIf(cov1, tr = 1) > 0, toFloat64(@s1_conf1), 1.)), if((bitAnd(arrayElement(@tl_bits, tl), 1) != 0 AND sumIf(re - rs, tr = 1) > sumIf(cov1, tr = 1)) OR (bitAnd(arrayElement(@tl_bits, tl), 2) != 0 AND sumIf(re - rs, tr = 1) > 0) OR (bitAnd(arrayElement(@tl_bits, tl), 4) != 0 AND sumIf(re - rs, tr = 2) > 0), 0., 1.)) AS confidence,
    countIf(tr = 1) AS n_import, countIf(tr = 2) AS n_export, max(re) AS reach,
    toUInt8(0) AS dirty
FROM
(
    -- The readings: the latest version of each, by argMax (small batches, one
    -- location: on 18.16 FINAL made one location's month ~8x slower, 105–215 ms against 18 ms).
    SELECT location_id AS loc, device_id AS dev, toString(direction) AS dir,
        toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
        toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
        argMax(energy_wh, version) AS e, argMax(confidence, version) AS rc,
        argMax(session_reference_id, version) AS sess, argMax(record_reference_id, version) AS ref,
        -- The arrays enter as columns: 18.16 spells a literal out in the name of every
        -- expression built on it, and those names made analysis slow.
            @s1_start AS s1_start, @s1_price AS s1_price,
            @s1_first AS s1_first, @s1_last AS s1_last
    FROM meter_records
    -- The locations first: where they are a few of those in the granules read (a tiered
    -- batch of every tenth location), the other columns are read for their rows only (a
    -- fleet month's 100 tiered locations on 18.16: 56-72 ms of CPU reading, 76-90 ms in WHERE).
    PREWHERE location_id IN @locs
    WHERE account_id = @account AND live_mode = @live
        AND device_id = ''
        AND direction = @dir
        AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w1)
    GROUP BY location_id, device_id, direction, tariff_rate, start_time, end_time
)
GROUP BY li, k, kend, ktr
ORDER BY li, gdev, k, kend, ktr
