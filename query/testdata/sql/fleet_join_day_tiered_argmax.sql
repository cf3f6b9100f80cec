-- Energy cost of many locations' (or devices') records, summed per group and bucket
-- (a reading, local day, local month or the whole window) in one read of the records.
-- Prices come from the "segments" of cost_segments.sql, the definition every cost path
-- shares. Per-record figures are never materialised: a bucket's money is the sum of its
-- pieces; its confidence is the least of its records' and pieces' confidences, or 0 when
-- a component with tariffs leaves some second of a record unpriced (segments of one
-- component never overlap, so covered seconds fall short of record seconds exactly then).
SELECT li, '' AS gdev, toUInt32(toStartOfDay(toDateTime(rs), @tz)) AS k, toUInt32(0) AS kend, toUInt8(0) AS ktr, '' AS ksess, '' AS kref,
    sumIf(e, comp = 0) AS energy, sum(xm) AS money, sumIf(xm, comp != 2) AS money_com, sumIf(xm, comp = 2) AS money_non,
    least(min(xc), if((bitAnd(arrayElement(@act_bits, li), 1) != 0 AND sumIf(xlen, tr = 1) > sumIf(xcov, comp = 1)) OR (bitAnd(arrayElement(@act_bits, li), 2) != 0 AND sumIf(xlen, tr = 1) > sumIf(xcov, comp = 2)) OR (bitAnd(arrayElement(@act_bits, li), 4) != 0 AND sumIf(xlen, tr = 2) > sumIf(xcov, comp = 3)), 0., 1.)) AS confidence,
    countIf(comp = 0 AND tr = 1) AS n_import, countIf(comp = 0 AND tr = 2) AS n_export,
    -- When the bucket's last record ends (priced buckets: docs/costs.md).
    max(re) AS reach,
    toUInt8(0) AS dirty
FROM
(
-- Tiered (the one definition of tier pieces): each record split at every price segment of
-- its components; pieces run their tier counters per location and device, component and
-- tier period (comp 0 holds the records themselves and prices nothing).
SELECT li, it.1 AS rs, it.2 AS re, comp,
    it.3 AS tr, it.4 AS e, it.5 AS xc, it.6 AS xcov, it.7 AS xlen,
    gdirty AS xdirty,
    -- The counter runs over [cum - wh, cum): each band's part at its price (bandMoney).
    arraySum(arrayMap((h, l, p, c, w) -> greatest(0., least(c, h) - greatest(c - w, l)) * p, it.9, arrayPopBack(arrayPushFront(it.9, 0.)), it.10, arrayResize([cum], length(it.9), cum), arrayResize([it.8], length(it.9), it.8))) / 1000 AS xm
FROM
(
    -- Records meet the segments of their hours and the pieces are gathered per tier
    -- period in one level (one level fewer for 18.16 to analyse again).
    SELECT li, comp,
        toUInt8(0) AS gdirty,
        -- Pieces that start before the window (the tier lookback; every reported record
        -- starts in it) only start the counter: one sum, no sort (a fleet's day mid-month
        -- on 18.16: the tiered query 168 ms alone, 40 MiB at peak; sorted too, 190 ms, 89 MiB).
        sumIf(if(comp = 0, 0., e * (if(comp = 0, 0, toInt64(least(re, se)) - toInt64(greatest(rs, ss))) AS pcov) / (re - rs)) AS pwh,
            (if(comp = 0, rs, greatest(rs, ss)) AS ps) < @w0) AS off,
        -- Counters run in time order (ties by record) within one tier period. comp 0 runs
        -- none: its records are gathered unsorted (a group is of one comp, so one of the two
        -- arrays is empty; a fleet month's 100 tiered locations on 18.16: ~30 ms of ~270 ms
        -- CPU less than sorting them too).
        arrayConcat(groupArrayIf((rs, re, tr, if(comp = 0, e, 0.), if(comp = 0, rc, least(rc, sconf)), pcov, if(comp = 0, toInt64(re - rs), 0),
    pwh, hi, price, is_out), comp = 0 AND ps >= @w0),
            arrayMap(x -> tupleElement(x, 2), arraySort(x -> tupleElement(x, 1), groupArrayIf((
                toUInt64(ps) * 4294967296 + rid % 4294967296, (rs, re, tr, if(comp = 0, e, 0.), if(comp = 0, rc, least(rc, sconf)), pcov, if(comp = 0, toInt64(re - rs), 0),
    pwh, hi, price, is_out)), comp != 0 AND ps >= @w0)))) AS items
    FROM (
-- The fleet's meter records (location-level, or devices'), with their location's number
-- li (which components have tariffs there is @act_bits[li], read of each group once, after
-- the sums: not aggregated per record) and a sentinel hour 0 that no segment has, so
-- ALL LEFT JOIN keeps each record once as comp 0 even where nothing prices it.
-- (18.16 analyses a subquery again for every level above it, ~5 ms a level even with no
-- rows: per-record expressions sit in as few levels as they can.)
SELECT li, cityHash64(dir, tr, rs, re) AS rid, rs, re, e, rc, tr, tr AS ctr,
    toUInt8(dir = @dir AND rs >= @w0) AS is_out,
    -- Locations on one product are priced by the segments of one of them, numbered (rep:
    -- its place in @rep_locs): the JOIN's hash table holds each product's segments once,
    -- keyed by numbers (a fleet month's 100 tiered locations on 18.16: ~25 ms of ~260 ms
    -- CPU less than by the location's id).
    toUInt32(arrayElement(@reps, li)) AS rep,
    arrayJoin(arrayPushBack(arrayMap((x, f) -> toUInt32(x + f), range(toUInt32(greatest(intDiv(re - 1, 3600) - intDiv(rs, 3600) + 1, 0))), arrayResize([toUInt32(intDiv(rs, 3600))], toUInt32(greatest(intDiv(re - 1, 3600) - intDiv(rs, 3600) + 1, 0)), toUInt32(intDiv(rs, 3600)))), toUInt32(0))) AS hb
FROM
(
    -- The readings: the latest version of each, by argMax (small batches, one
    -- location: on 18.16 FINAL made one location's month ~8x slower, 105–215 ms against 18 ms).
    SELECT location_id AS loc, transform(loc, @act_loc, @act_n, toUInt32(0)) AS li, device_id AS dev, toString(direction) AS dir,
        toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
        toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
        argMax(energy_wh, version) AS e, argMax(confidence, version) AS rc
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
        AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w1)
    GROUP BY location_id, device_id, direction, tariff_rate, start_time, end_time
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
    GROUP BY li, comp, tier
)
ARRAY JOIN
    items AS it,
    arrayPopFront(arrayCumSum(arrayPushFront(arrayMap(x -> x.8, items), off))) AS cum
WHERE it.11 = 1
)
GROUP BY li, k, kend, ktr
ORDER BY li, gdev, k, kend, ktr
