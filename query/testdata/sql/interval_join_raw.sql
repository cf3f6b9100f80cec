-- Energy cost of one scope's records: one row per record, or per local day.
SELECT 
    rs AS k, re AS kend, tr AS ktr, sess AS ksess, ref AS kref,
    e AS energy, m AS money, m_com AS money_com, m_non AS money_non, conf AS confidence,
    toUInt64(tr = 1) AS n_import, toUInt64(tr = 2) AS n_export
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
-- Untiered costs in one read of the records: every record also enters the join with a
-- sentinel hour 0 that no segment has, so ALL LEFT JOIN keeps one row per record even
-- where no price covers it (LOCAL, no tariff of its rate, a missing market price).
-- Inner columns are x-prefixed: an alias equal to a column name would shadow it inside
-- the other aggregates.
SELECT rid, any(xrs) AS rs, any(xre) AS re, any(xe) AS e, any(xrc) AS rc, any(xtr) AS tr,
    any(xsess) AS sess, any(xref) AS ref,
    sumIf(xm, comp != 0) AS m, sumIf(xm, comp != 0 AND comp != 2) AS m_com, sumIf(xm, comp = 2) AS m_non,
    minIf(xc, comp != 0) AS c, countIf(comp != 0) AS n,
    sumIf(xcov, comp = 1) AS cov1, sumIf(xcov, comp = 2) AS cov2, sumIf(xcov, comp = 3) AS cov3
FROM
(
    SELECT rid, rs AS xrs, re AS xre, e AS xe, rc AS xrc, tr AS xtr, sess AS xsess, ref AS xref, comp,
        least(rc, sconf) AS xc,
        if(comp = 0, 0, toInt64(least(re, se)) - toInt64(greatest(rs, ss))) AS xcov,
        if(comp = 0, 0., e * xcov / (re - rs) * price[1] / 1000) AS xm
    FROM
    (
        SELECT rid, rs, re, e, rc, tr, sess, ref, tr AS ctr, arrayJoin(arrayPushBack(arrayMap((x, f) -> toUInt32(x + f), range(toUInt32(intDiv(re - 1, 3600) - intDiv(rs, 3600) + 1)), arrayResize([toUInt32(intDiv(rs, 3600))], toUInt32(intDiv(re - 1, 3600) - intDiv(rs, 3600) + 1), toUInt32(intDiv(rs, 3600)))), toUInt32(0))) AS hb
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
        WHERE is_out = 1
    ) AS recs
    ALL LEFT JOIN
    (
        SELECT comp, ctr, ss, se, price, sconf, arrayJoin(arrayMap((x, f) -> toUInt32(x + f), range(toUInt32(intDiv(se - 1, 3600) - intDiv(ss, 3600) + 1)), arrayResize([toUInt32(intDiv(ss, 3600))], toUInt32(intDiv(se - 1, 3600) - intDiv(ss, 3600) + 1), toUInt32(intDiv(ss, 3600))))) AS hb
        FROM (
-- The "segments" of the plan, read out beforehand by the same statement (segment_rows)
-- and sent with this query as the external table _segs: 18.16 analyses a nested subquery
-- again for every level above it (a market year's cost query: 63–72 ms, 139 ms nested).
SELECT loc, comp, ctr, ss, se, tier, hi, price, sconf FROM _segs
)
    ) AS segs USING (ctr, hb)
    WHERE hb = 0 OR (ss < re AND se > rs AND hb = intDiv(greatest(rs, ss), 3600))
)
GROUP BY rid
)
)
ORDER BY k, kend, ktr
