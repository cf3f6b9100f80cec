{{define "pieces"}}
-- Priced pieces of meter records: each record split at every price change of every
-- component (1 import commodity, 2 import non-commodity, 3 export commodity), with the
-- money of each piece after tier bands. Records from @lookback run the tier counters;
-- only pieces of reported records (is_out = 1) leave this query.
-- (Used only with banded rates; without them "single" prices records in one read.)
SELECT rid, comp, pconf, cover,
    -- The counter runs over [cum - wh, cum): each band's part at its price (bandMoney).
    {{bandMoney "hi" "price" "cum" "wh"}} AS money
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
        FROM ({{template "joined" .}})
        GROUP BY comp, tier
    )
    ARRAY JOIN
        items AS it,
        {{counterEnds "items" "4" "off"}} AS cum
)
WHERE is_out = 1
{{end}}

{{define "joined"}}
-- Records split at every price segment of their components.
SELECT rid, is_out, comp, tier, hi, price, least(rc, sconf) AS pconf,
    greatest(rs, ss) AS ps, least(re, se) AS pe, e * (pe - ps) / (re - rs) AS wh
FROM
(
    SELECT rid, rs, re, e, rc, is_out, tr AS ctr, arrayJoin({{hours "rs" "re"}}) AS hb
    FROM ({{template "records" .}})
) AS recs
-- 18.16 has no range or ASOF join: ranges meet through an equi-join on the UTC
-- hours they cover, and each overlapping pair is kept once, at its first hour.
ALL INNER JOIN
(
    SELECT comp, ctr, ss, se, tier, hi, price, sconf, arrayJoin({{hours "ss" "se"}}) AS hb
    FROM ({{template "segment_source" .}})
) AS segs USING (ctr, hb)
WHERE ss < re AND se > rs AND hb = intDiv(greatest(rs, ss), 3600)
{{end}}

{{define "single"}}
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
        SELECT rid, rs, re, e, rc, tr, sess, ref, tr AS ctr, arrayJoin(arrayPushBack({{hours "rs" "re"}}, toUInt32(0))) AS hb
        FROM ({{template "records" .}})
        WHERE is_out = 1
    ) AS recs
    ALL LEFT JOIN
    (
        SELECT comp, ctr, ss, se, price, sconf, arrayJoin({{hours "ss" "se"}}) AS hb
        FROM ({{template "segment_source" .}})
    ) AS segs USING (ctr, hb)
    WHERE hb = 0 OR (ss < re AND se > rs AND hb = intDiv(greatest(rs, ss), 3600))
)
GROUP BY rid
{{end}}
