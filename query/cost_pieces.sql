{{define "pieces"}}
-- Priced pieces of meter records: each record split at every price change of every
-- component (1 import commodity, 2 import non-commodity, 3 export commodity), with the
-- money of each piece after tier bands. Records from @lookback run the tier counters;
-- only pieces of reported records (is_out = 1) leave this query.
{{- if not .Tiered}}
-- No tariff here has more than one band: a piece costs its energy at the first band's price.
SELECT rid, comp, pconf, pe - ps AS cover, wh * price[1] / 1000 AS money
FROM
({{template "joined" .}})
WHERE is_out = 1
{{- else}}
SELECT rid, comp, pconf, cover,
    -- The counter runs over [cum - wh, cum): the part inside each band [lo, hi) costs the
    -- band's price per kWh. (18.16 lambdas cannot capture columns here: cum and wh enter
    -- as arrays of their own.)
    arraySum(arrayMap((h, l, p, c, w) -> greatest(0., least(c, h) - greatest(c - w, l)) * p,
        hi, arrayPushFront(arrayPopBack(hi), 0.), price,
        arrayResize([cum], length(hi), cum), arrayResize([wh], length(hi), wh))) / 1000 AS money
FROM
(
    SELECT comp, it.2 AS rid, it.3 AS is_out, it.4 AS wh, it.5 AS hi, it.6 AS price, it.7 AS pconf, it.8 AS cover, cum
    FROM
    (
        SELECT comp, tier,
            -- Tier counters run in time order (ties by record) within one tier period.
            arraySort(x -> x.1, groupArray((toUInt64(ps) * 4294967296 + rid % 4294967296, rid, is_out, wh, hi, price, pconf, pe - ps))) AS items
        FROM ({{template "joined" .}})
        GROUP BY comp, tier
    )
    ARRAY JOIN
        items AS it,
        arrayCumSum(arrayMap(x -> x.4, items)) AS cum
)
WHERE is_out = 1
{{- end}}
{{end}}

{{define "joined"}}
-- Records split at every price segment of their components.
SELECT rid, is_out, comp, tier, hi, price, least(rc, sconf) AS pconf,
    greatest(rs, ss) AS ps, least(re, se) AS pe, e * (pe - ps) / (re - rs) AS wh
FROM
(
    SELECT rid, rs, re, e, rc, is_out, tr AS ctr, arrayJoin({{hours "rs" "re"}}) AS hb
    FROM ({{template "records" .}})
)
-- 18.16 has no range or ASOF join: ranges meet through an equi-join on the UTC
-- hours they cover, and each overlapping pair is kept once, at its first hour.
ALL INNER JOIN
(
    SELECT comp, ctr, ss, se, tier, hi, price, sconf, arrayJoin({{hours "ss" "se"}}) AS hb
    FROM ({{template "segments" .}})
) USING (ctr, hb)
WHERE ss < re AND se > rs AND hb = intDiv(greatest(rs, ss), 3600)
{{end}}
