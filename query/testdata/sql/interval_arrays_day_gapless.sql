-- Untiered costs in one read of the records, no JOIN and two SELECT levels: 18.16
-- re-analyses nested subqueries at every level above them, so each level and each JOIN
-- stage cost 10–20 ms there. Every component's price segments arrive as constant
-- arrays, sorted and disjoint, with a bucket index (first, last: 1-based segment numbers
-- per bucket of @bucket seconds from @t0) naming the few segments a record can touch.
-- The per-record money is a WITH list, so the daily sums need no third level.
WITH
    toUInt16(1) AS act,
    toUInt32(intDiv(rs - @t0, @bucket) + 1) AS b0, toUInt32(intDiv(re - 1 - @t0, @bucket) + 1) AS b1,
        -- Component 1: candidates are segments first[b0] … last[b1] (none when empty);
        -- o1 holds the record's seconds inside each (≤ 0: none).
        arrayElement(s1_first, b0) AS i1, greatest(toInt64(arrayElement(s1_last, b1)) - i1 + 1, 0) AS k1,
        arrayMap((a, b) -> toInt64(least(re, b)) - toInt64(greatest(rs, a)),
            arraySlice(s1_start, i1, k1), arraySlice(arrayPushBack(arraySlice(s1_start, i1 + 1, k1), toUInt32(@s1_last_end)), 1, k1)) AS o1,
        arraySum(arrayMap(o -> greatest(o, 0), o1)) AS cov1,
        arraySum(arrayMap((o, p) -> e * greatest(o, 0) / (re - rs) * p / 1000, o1, arraySlice(s1_price, i1, k1))) AS m1,
        -- One confidence for every segment: the least over the segments the record meets.
        if(cov1 > 0, least(rc, toFloat64(@s1_conf1)), 1.) AS c1
,
        -- No segment of component 2: nothing to pay and nothing covered (act says
        -- whether the component has tariffs, so whether uncovered time lowers confidence).
        0. AS m2, toInt64(0) AS cov2, 1. AS c2
,
        -- No segment of component 3: nothing to pay and nothing covered (act says
        -- whether the component has tariffs, so whether uncovered time lowers confidence).
        0. AS m3, toInt64(0) AS cov3, 1. AS c3
,
    multiIf(tr = 1, m1 + m2, tr = 2, m3, 0.) AS m, multiIf(tr = 1, m1, tr = 2, m3, 0.) AS m_com,
    if(tr = 1, m2, 0.) AS m_non,
    -- A component with tariffs that leaves a second of a record unpriced (a missing
    -- market price) prices it 0 there, with confidence 0.
    least(least(rc, multiIf(tr = 1, least(c1, c2), tr = 2, c3, 1.)),
        if((tr = 1 AND ((bitAnd(act, 1) != 0 AND cov1 < re - rs) OR (bitAnd(act, 2) != 0 AND cov2 < re - rs)))
            OR (tr = 2 AND bitAnd(act, 4) != 0 AND cov3 < re - rs), 0., 1.)) AS conf
SELECT 
    toUInt32(toStartOfDay(toDateTime(rs), @tz)) AS k, toUInt32(0) AS kend, toUInt8(0) AS ktr, '' AS ksess, '' AS kref,
    sum(e) AS energy, sum(m) AS money, sum(m_com) AS money_com, sum(m_non) AS money_non, min(conf) AS confidence,
    countIf(tr = 1) AS n_import, countIf(tr = 2) AS n_export
FROM
(
        -- The latest version of each reading of the window (argMax, not FINAL: see cost_records.sql).
        SELECT toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
            toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
            argMax(energy_wh, version) AS e, argMax(confidence, version) AS rc,
            -- Daily sums show no references: two fewer columns to read in every day's part.
            '' AS sess, '' AS ref,
            -- The arrays enter as columns: 18.16 spells a literal out in the name of every
            -- expression built on it, and those names made analysis slow.
            @s1_start AS s1_start, @s1_price AS s1_price,
            @s1_first AS s1_first, @s1_last AS s1_last
        FROM meter_records
        WHERE account_id = @account AND live_mode = @live AND location_id = @location AND device_id = @device
            AND direction = @dir AND start_time >= toDateTime(@w0) AND start_time < toDateTime(@w1)
        GROUP BY direction, tariff_rate, start_time, end_time
        HAVING @session = '' OR sess = @session
)
GROUP BY k
ORDER BY k, kend, ktr
