-- One location's price segments over [@t0, @t1): the "segments" every cost path prices
-- with (cost_segments.sql), read out for the array path and price timelines to carry.
SELECT comp, greatest(ss, @t0) AS s0, least(se, @t1) AS s1, price[1] AS rate, sconf
FROM (
-- Price segments: schedule periods as they are; market periods split at every market
-- interval, priced (market price + surcharge_fixed) × (1 + surcharge_percentage / 100).
-- Time without a market price has no segment: the record's coverage check makes it 0
-- with confidence 0.
SELECT loc, comp, ctr, ss, se, tier, hi, fixed AS price, sconf
FROM (
-- Rate periods clipped to the sources that say which tariff prices which time of each
-- component of each location, with the source's confidence (1 in contract, lower when
-- extrapolated).
SELECT src.6 AS loc, src.2 AS comp, toUInt8(if(src.2 = 3, 2, 1)) AS ctr,
    greatest(ps, src.3) AS ss, least(pe, src.4) AS se, tier, hi, fixed, sfix, spct, mkt, src.5 AS sconf
FROM
(
    SELECT tariff_id AS tid, toUInt32(start_time) AS ps, toUInt32(end_time) AS pe, toUInt32(tier_start) AS tier,
        band_hi AS hi, band_fixed AS fixed, band_sfix AS sfix, band_spct AS spct, market_id AS mkt
    FROM tariff_rates
    WHERE account_id = @account AND live_mode = @live AND tariff_id IN @tids
        AND start_time >= toDateTime(@range_from_pad) AND start_time < toDateTime(@range_to)
    -- Versions of an expanded period are identical (a schedule never changes), so any one
    -- will do: LIMIT BY drops duplicates of a re-expansion far cheaper than FINAL.
    LIMIT 1 BY tariff_id, start_time
) AS periods
ALL INNER JOIN
(
    SELECT arrayJoin(arrayMap((t, c, f, u, k, l) -> (t, toUInt8(c), toUInt32(f), toUInt32(u), toFloat64(k), l),
        @src_tid, @src_comp, @src_from, @src_to, @src_conf, @src_loc)) AS src, src.1 AS tid
) AS sources USING tid
WHERE pe > src.3 AND ps < src.4
)
WHERE mkt = ''
UNION ALL
-- 18.16 cannot capture a column that came through a JOIN inside a lambda: the market
-- price enters arrayMap as an array of its own instead.
SELECT loc, comp, ctr, ss, se, tier, hi,
    arrayMap((f, p, m) -> (m + f) * (1 + p / 100), sfix, spct, arrayResize([mp1], length(sfix), mp1)) AS price, sconf
FROM
(
    SELECT loc, comp, ctr, greatest(ss0, ms) AS ss, least(se0, me) AS se, tier, hi, sfix, spct, mp AS mp1,
        least(sconf0, mc) AS sconf
    FROM
    (
        SELECT loc, comp, ctr, ss AS ss0, se AS se0, tier, hi, sfix, spct, sconf AS sconf0, mkt, arrayJoin(arrayMap((x, f) -> toUInt32(x + f), range(toUInt32(greatest(intDiv(se - 1, 3600) - intDiv(ss, 3600) + 1, 0))), arrayResize([toUInt32(intDiv(ss, 3600))], toUInt32(greatest(intDiv(se - 1, 3600) - intDiv(ss, 3600) + 1, 0)), toUInt32(intDiv(ss, 3600))))) AS hb
        FROM (
-- Rate periods clipped to the sources that say which tariff prices which time of each
-- component of each location, with the source's confidence (1 in contract, lower when
-- extrapolated).
SELECT src.6 AS loc, src.2 AS comp, toUInt8(if(src.2 = 3, 2, 1)) AS ctr,
    greatest(ps, src.3) AS ss, least(pe, src.4) AS se, tier, hi, fixed, sfix, spct, mkt, src.5 AS sconf
FROM
(
    SELECT tariff_id AS tid, toUInt32(start_time) AS ps, toUInt32(end_time) AS pe, toUInt32(tier_start) AS tier,
        band_hi AS hi, band_fixed AS fixed, band_sfix AS sfix, band_spct AS spct, market_id AS mkt
    FROM tariff_rates
    WHERE account_id = @account AND live_mode = @live AND tariff_id IN @tids
        AND start_time >= toDateTime(@range_from_pad) AND start_time < toDateTime(@range_to)
    -- Versions of an expanded period are identical (a schedule never changes), so any one
    -- will do: LIMIT BY drops duplicates of a re-expansion far cheaper than FINAL.
    LIMIT 1 BY tariff_id, start_time
) AS periods
ALL INNER JOIN
(
    SELECT arrayJoin(arrayMap((t, c, f, u, k, l) -> (t, toUInt8(c), toUInt32(f), toUInt32(u), toFloat64(k), l),
        @src_tid, @src_comp, @src_from, @src_to, @src_conf, @src_loc)) AS src, src.1 AS tid
) AS sources USING tid
WHERE pe > src.3 AND ps < src.4
)
        WHERE mkt != ''
    ) AS periods
    ALL INNER JOIN
    (
        SELECT mkt, ms, me, mp, mc, arrayJoin(arrayMap((x, f) -> toUInt32(x + f), range(toUInt32(greatest(intDiv(me - 1, 3600) - intDiv(ms, 3600) + 1, 0))), arrayResize([toUInt32(intDiv(ms, 3600))], toUInt32(greatest(intDiv(me - 1, 3600) - intDiv(ms, 3600) + 1, 0)), toUInt32(intDiv(ms, 3600))))) AS hb
        FROM
        (
            SELECT market_id AS mkt, toUInt32(start_time) AS ms, toUInt32(argMax(end_time, version)) AS me,
                argMax(price, version) AS mp, argMax(confidence, version) AS mc
            FROM market_prices
            WHERE account_id = @account AND live_mode = @live AND market_id IN @markets
                AND start_time >= toDateTime(@range_from_pad) AND start_time < toDateTime(@range_to)
            -- The latest price of each interval: a re-sent interval replaces the old one.
            GROUP BY market_id, start_time
        )
    ) AS prices USING (mkt, hb)
    WHERE ms < se0 AND me > ss0 AND hb = intDiv(greatest(ss0, ms), 3600)
)
)
WHERE ss < @t1 AND se > @t0 AND has(@comps, toUInt32(comp)) AND length(price) > 0
ORDER BY s0, comp
LIMIT @limit
