-- Energy cost of many locations' (or devices') records, summed per group and bucket
-- (a reading, local day, local month or the whole window) in one read of the records.
-- Prices come from the "segments" of cost_segments.sql, the definition every cost path
-- shares. Per-record figures are never materialised: a bucket's money is the sum of its
-- pieces; its confidence is the least of its records' and pieces' confidences, or 0 when
-- a component with tariffs leaves some second of a record unpriced (segments of one
-- component never overlap, so covered seconds fall short of record seconds exactly then).
SELECT li, dev AS gdev, toUInt32(toDateTime(toStartOfMonth(toDateTime(rs), @tz), @tz)) AS k, toUInt32(0) AS kend, toUInt8(0) AS ktr, '' AS ksess, '' AS kref,
    sumIf(e, comp = 0) AS energy, sum(xm) AS money, sumIf(xm, comp != 2) AS money_com, sumIf(xm, comp = 2) AS money_non,
    least(min(xc), if((bitAnd(arrayElement(@act_bits, li), 1) != 0 AND sumIf(xlen, tr = 1) > sumIf(xcov, comp = 1)) OR (bitAnd(arrayElement(@act_bits, li), 2) != 0 AND sumIf(xlen, tr = 1) > sumIf(xcov, comp = 2)) OR (bitAnd(arrayElement(@act_bits, li), 4) != 0 AND sumIf(xlen, tr = 2) > sumIf(xcov, comp = 3)), 0., 1.)) AS confidence,
    countIf(comp = 0 AND tr = 1) AS n_import, countIf(comp = 0 AND tr = 2) AS n_export,
    -- When the bucket's last record ends (priced buckets: docs/costs.md).
    max(re) AS reach,
    -- Two rows of one reading (see fleet_dirty in fleet_arrays.sql; rid is the reading's key).
    toUInt8(countIf(comp = 0) != uniqExactIf(rid, comp = 0)) AS dirty
FROM
(
-- Untiered: each record split at every price segment it meets, priced where it lies.
SELECT dev, li, rid, rs, re, comp, tr, e,
    if(comp = 0, rc, least(rc, sconf)) AS xc,
    if(comp = 0, 0, toInt64(least(re, se)) - toInt64(greatest(rs, ss))) AS xcov,
    if(comp = 0, toInt64(re - rs), 0) AS xlen,
    if(comp = 0, 0., e / (re - rs) * (xcov * price[1]) / 1000) AS xm
FROM (
-- The fleet's meter records (location-level, or devices'), with their location's number
-- li (which components have tariffs there is @act_bits[li], read of each group once, after
-- the sums: not aggregated per record) and a sentinel hour 0 that no segment has, so
-- ALL LEFT JOIN keeps each record once as comp 0 even where nothing prices it.
-- (18.16 analyses a subquery again for every level above it, ~5 ms a level even with no
-- rows: per-record expressions sit in as few levels as they can.)
SELECT dev, li, cityHash64(dir, tr, rs, re) AS rid, rs, re, e, rc, tr, tr AS ctr,
    toUInt8(dir = @dir AND rs >= @w0) AS is_out,
    -- Locations on one product are priced by the segments of one of them, numbered (rep:
    -- its place in @rep_locs): the JOIN's hash table holds each product's segments once,
    -- keyed by numbers (a fleet month's 100 tiered locations on 18.16: ~25 ms of ~260 ms
    -- CPU less than by the location's id).
    toUInt32(arrayElement(@reps, li)) AS rep,
    arrayJoin(arrayPushBack(arrayMap((x, f) -> toUInt32(x + f), range(toUInt32(greatest(intDiv(re - 1, 3600) - intDiv(rs, 3600) + 1, 0))), arrayResize([toUInt32(intDiv(rs, 3600))], toUInt32(greatest(intDiv(re - 1, 3600) - intDiv(rs, 3600) + 1, 0)), toUInt32(intDiv(rs, 3600)))), toUInt32(0))) AS hb
FROM
(
    -- The readings: every stored version, undeduplicated: a reading sent twice
    -- and not yet merged is counted twice, which "dirty" reports (a fleet month read 568 ms
    -- with FINAL against 306 ms this way on 18.16). Go prices dirty locations again, deduplicated.
    SELECT location_id AS loc, transform(loc, @act_loc, @act_n, toUInt32(0)) AS li, device_id AS dev, toString(direction) AS dir,
        toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
        toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
        energy_wh AS e, confidence AS rc
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
        AND device_id != ''
        AND direction = @dir
        AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w1)
)
-- Each location's own tier lookback: records before it run no counter of its window.
WHERE rs >= arrayElement(@lookbacks, li)
) AS recs
ALL LEFT JOIN (
-- Price segments of the fleet's products (by representative location) by the UTC hours they cover.
SELECT toUInt32(indexOf(@rep_locs, loc)) AS rep, comp, ctr, ss, se, tier, hi, price, sconf, arrayJoin(arrayMap((x, f) -> toUInt32(x + f), range(toUInt32(greatest(intDiv(se - 1, 3600) - intDiv(ss, 3600) + 1, 0))), arrayResize([toUInt32(intDiv(ss, 3600))], toUInt32(greatest(intDiv(se - 1, 3600) - intDiv(ss, 3600) + 1, 0)), toUInt32(intDiv(ss, 3600))))) AS hb
FROM (
-- The "segments" of the plan, read out beforehand by the same statement (segment_rows)
-- and sent with this query as the external table _segs: 18.16 analyses a nested subquery
-- again for every level above it (a market year's cost query: 63–72 ms, 139 ms nested).
SELECT loc, comp, ctr, ss, se, tier, hi, price, sconf FROM _segs
)
) AS segs USING (rep, ctr, hb)
WHERE hb = 0 OR (ss < re AND se > rs AND hb = intDiv(greatest(rs, ss), 3600))
)
GROUP BY li, dev, k, kend, ktr
ORDER BY li, gdev, k, kend, ktr
