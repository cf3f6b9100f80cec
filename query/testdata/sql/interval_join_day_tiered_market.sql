-- Energy cost of one scope's records: one row per record, or per local day.
SELECT 
    toUInt32(toStartOfDay(toDateTime(rs), @tz)) AS k, toUInt32(0) AS kend, toUInt8(0) AS ktr, '' AS ksess, '' AS kref,
    sum(e) AS energy, sum(m) AS money, sum(m_com) AS money_com, sum(m_non) AS money_non, min(conf) AS confidence,
    countIf(tr = 1) AS n_import, countIf(tr = 2) AS n_export
FROM
(
    SELECT rs, re, e, tr, sess, ref, m, m_com, m_non,
        -- A record not fully covered by a component that has tariffs (a market price is
        -- missing) is priced 0 there with confidence 0.
        least(least(rc, if(n > 0, c, 1.)),
            if((tr = 1 AND ((has(@active, 1) AND cov1 < re - rs) OR (has(@active, 2) AND cov2 < re - rs)))
                OR (tr = 2 AND has(@active, 3) AND cov3 < re - rs), 0., 1.)) AS conf
    FROM
    (
        SELECT * FROM
        (
            SELECT rid, rs, re, e, rc, tr, sess, ref FROM (
-- Meter records of one scope from the tier lookback on.
SELECT rid, rs, re, e, rc, tr,
    toUInt8(dir = @dir AND rs >= @w0 AND (@session = '' OR sess = @session)) AS is_out,
    sess, ref
FROM
(
    SELECT
        cityHash64(dir, toString(tariff_rate), rs, re) AS rid,
        rs, re, e, rc, dir,
        toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
        sess, ref
    FROM
    (
        -- The latest version of each reading (its key within the scope is direction,
        -- tariff_rate, start, end). argMax, not FINAL: on 18.16 FINAL made this read ~8x
        -- slower (105–215 ms against 18 ms for one location's month).
        SELECT toString(direction) AS dir, tariff_rate, toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
            argMax(energy_wh, version) AS e, argMax(confidence, version) AS rc,
            argMax(session_reference_id, version) AS sess, argMax(record_reference_id, version) AS ref
        FROM meter_records
        WHERE account_id = @account AND live_mode = @live AND location_id = @location AND device_id = @device
            AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w1)
        GROUP BY direction, tariff_rate, start_time, end_time
    )
)
) WHERE is_out = 1
        ) AS recs
        -- Joined subqueries are aliased: current releases refuse them without one.
        ANY LEFT JOIN
        (
            SELECT rid, sum(money) AS m, sumIf(money, comp != 2) AS m_com, sumIf(money, comp = 2) AS m_non,
                min(pconf) AS c, count() AS n,
                sumIf(cover, comp = 1) AS cov1, sumIf(cover, comp = 2) AS cov2, sumIf(cover, comp = 3) AS cov3
            FROM (
-- Priced pieces of meter records: each record split at every price change of every
-- component (1 import commodity, 2 import non-commodity, 3 export commodity), with the
-- money of each piece after tier bands. Records from @lookback run the tier counters;
-- only pieces of reported records (is_out = 1) leave this query.
-- (Used only with banded rates; without them "single" prices records in one read.)
SELECT rid, comp, pconf, cover,
    -- The counter runs over [cum - wh, cum): each band's part at its price (bandMoney).
    arraySum(arrayMap((h, l, p, c, w) -> greatest(0., least(c, h) - greatest(c - w, l)) * p, hi, arrayPopBack(arrayPushFront(hi, 0.)), price, arrayResize([cum], length(hi), cum), arrayResize([wh], length(hi), wh))) / 1000 AS money
FROM
(
    SELECT comp, it.2 AS rid, it.3 AS is_out, it.4 AS wh, it.5 AS hi, it.6 AS price, it.7 AS pconf, it.8 AS cover, cum
    FROM
    (
        SELECT comp, tier,
            -- Pieces that start before the window (every reported record starts in it; an
            -- instant's window starts with it) only start the counter: one sum, no sort.
            sumIf(wh, ps < @w0) AS off,
            -- Tier counters run in time order (ties by record) within one tier period.
            arraySort(x -> x.1, groupArrayIf((toUInt64(ps) * 4294967296 + rid % 4294967296, rid, is_out, wh, hi, price, pconf, pe - ps), ps >= @w0)) AS items
        FROM (
-- Records split at every price segment of their components.
SELECT rid, is_out, comp, tier, hi, price, least(rc, sconf) AS pconf,
    greatest(rs, ss) AS ps, least(re, se) AS pe, e * (pe - ps) / (re - rs) AS wh
FROM
(
    SELECT rid, rs, re, e, rc, is_out, tr AS ctr, arrayJoin(arrayMap((x, f) -> toUInt32(x + f), range(toUInt32(intDiv(re - 1, 3600) - intDiv(rs, 3600) + 1)), arrayResize([toUInt32(intDiv(rs, 3600))], toUInt32(intDiv(re - 1, 3600) - intDiv(rs, 3600) + 1), toUInt32(intDiv(rs, 3600))))) AS hb
    FROM (
-- Meter records of one scope from the tier lookback on.
SELECT rid, rs, re, e, rc, tr,
    toUInt8(dir = @dir AND rs >= @w0 AND (@session = '' OR sess = @session)) AS is_out,
    sess, ref
FROM
(
    SELECT
        cityHash64(dir, toString(tariff_rate), rs, re) AS rid,
        rs, re, e, rc, dir,
        toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
        sess, ref
    FROM
    (
        -- The latest version of each reading (its key within the scope is direction,
        -- tariff_rate, start, end). argMax, not FINAL: on 18.16 FINAL made this read ~8x
        -- slower (105–215 ms against 18 ms for one location's month).
        SELECT toString(direction) AS dir, tariff_rate, toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
            argMax(energy_wh, version) AS e, argMax(confidence, version) AS rc,
            argMax(session_reference_id, version) AS sess, argMax(record_reference_id, version) AS ref
        FROM meter_records
        WHERE account_id = @account AND live_mode = @live AND location_id = @location AND device_id = @device
            AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w1)
        GROUP BY direction, tariff_rate, start_time, end_time
    )
)
)
) AS recs
-- 18.16 has no range or ASOF join: ranges meet through an equi-join on the UTC
-- hours they cover, and each overlapping pair is kept once, at its first hour.
ALL INNER JOIN
(
    SELECT comp, ctr, ss, se, tier, hi, price, sconf, arrayJoin(arrayMap((x, f) -> toUInt32(x + f), range(toUInt32(intDiv(se - 1, 3600) - intDiv(ss, 3600) + 1)), arrayResize([toUInt32(intDiv(ss, 3600))], toUInt32(intDiv(se - 1, 3600) - intDiv(ss, 3600) + 1), toUInt32(intDiv(ss, 3600))))) AS hb
    FROM (
-- The "segments" of the plan, read out beforehand by the same statement (segment_rows)
-- and sent with this query as the external table _segs: 18.16 analyses a nested subquery
-- again for every level above it (a market year's cost query: 63–72 ms, 139 ms nested).
SELECT loc, comp, ctr, ss, se, tier, hi, price, sconf FROM _segs
)
) AS segs USING (ctr, hb)
WHERE ss < re AND se > rs AND hb = intDiv(greatest(rs, ss), 3600)
)
        GROUP BY comp, tier
    )
    ARRAY JOIN
        items AS it,
        arrayPopFront(arrayCumSum(arrayPushFront(arrayMap(x -> x.4, items), off))) AS cum
)
WHERE is_out = 1
)
            GROUP BY rid
        ) AS money USING rid
    )
)
GROUP BY k
ORDER BY k, kend, ktr
