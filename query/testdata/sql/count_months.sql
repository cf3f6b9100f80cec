-- The change counts of one zone's locations (or devices) per local month within
-- [@d0, @d1] (count_ranges; a run reaches at most two months), compared with the counts
-- each day's bucket was priced under (bucket_months.go): the records written (kind 0) as
-- the month's fingerprint, print = sum over its days of count × day_weight (day_weight,
-- uint64 arithmetic wraps), so a run of days adds its weights once and no row is grouped by
-- day; the dated price changes (kind 1) as each day's part of such a sum, by day of the
-- month (days, day_prints: the reader adds the days that have a bucket); kind 2 (every
-- date) summed once, under month 0 (total). From the same rows, the fingerprints of each
-- month's reach that month_prints.sql reads now (a priced month is kept under them:
-- priced_months.go): kind 3, the records' (count × day_weight of each UTC date once),
-- kind 4, the dated price changes'; for them the records must be read from @d0 - 4 days
-- to @d1 + 2 days.
SELECT kind, location_id, device_id, toUInt32(month) AS month_number, sum(n) AS total, sum(n * weights) AS print,
    tupleElement(sumMapIf(dom, dom_print, kind = 1), 1) AS days, tupleElement(sumMapIf(dom, dom_print, kind = 1), 2) AS day_prints
FROM (
    SELECT kind, location_id, device_id, n, month,
        if(kind >= 3, bitOr(intHash64(toUInt32(utc_day)), toUInt64(1)), if(kind != 0, toUInt64(0), if(s = e, bitOr(intHash64(toUInt32(s)), toUInt64(1)),
            arraySum(arrayMap(i -> bitOr(intHash64(toUInt32(addDays(s, i))), toUInt64(1)), range(if(kind = 0, run_days, toUInt32(0)))))))) AS weights,
        arrayMap(i -> toUInt8(toDayOfMonth(s) + i), range(if(kind = 1, run_days, toUInt32(0)))) AS dom,
        arrayMap(i -> n * bitOr(intHash64(toUInt32(addDays(s, i))), toUInt64(1)), range(length(dom))) AS dom_print
    FROM (
        SELECT kind, location_id, device_id, n, month, s, e, utc_day,
            toUInt32(if(kind >= 2, 0, toUInt32(e) - toUInt32(s) + 1)) AS run_days
        FROM (
            SELECT kind, location_id, device_id, n, month, utc_day,
                greatest(a1, month) AS s, least(b1, addDays(addMonths(month, 1), -1)) AS e
            FROM (
                SELECT kind, location_id, device_id, n, a1, b1, utc_day,
                    arrayJoin(if(kind = 2, [a], if(kind >= 3, if(toStartOfMonth(addDays(utc_day, -2)) = toStartOfMonth(addDays(utc_day, 4)), [toStartOfMonth(addDays(utc_day, -2))], [toStartOfMonth(addDays(utc_day, -2)), toStartOfMonth(addDays(utc_day, 4))]),
                        if(toStartOfMonth(a1) = toStartOfMonth(b1), [toStartOfMonth(a1)],
                        [toStartOfMonth(a1), toStartOfMonth(b1)])))) AS month
                FROM (
                    SELECT toUInt8(if(r = 1, k + 3, k)) AS kind, location_id, device_id, n, a, utc_day,
                        greatest(a, toDate(@d0)) AS a1, least(b, toDate(@d1)) AS b1
                    FROM (
                        SELECT kind AS k, location_id, device_id, n, a, b, utc_day,
                            arrayJoin(if(kind != 2 AND lead = 1, [toUInt8(0), toUInt8(1)], [toUInt8(0)])) AS r
                        FROM (
-- The runs of local days of @tz the change counts reach (count_dates), one row a run:
-- [a, b], the UTC date it counts (utc_day) and whether it is that date's first run (lead:
-- a date reaching two local days makes two rows).
SELECT kind, location_id, device_id, addDays(toDate('1970-01-01'), if(r = 0, a0, a1)) AS a,
    addDays(toDate('1970-01-01'), if(r = 0, b0, b1)) AS b, n, addDays(toDate('1970-01-01'), utc_day_number) AS utc_day,
    toUInt8(r = 0) AS lead
FROM (
    SELECT kind, location_id, device_id, n, utc_day_number, a0, b0, a1, b1,
        arrayJoin(if(a0 = a1, [toUInt8(0)], [toUInt8(0), toUInt8(1)])) AS r
    FROM (
-- The one definition of the local days of @tz a change count reaches (docs/costs.md,
-- "Priced buckets"), one row per count as stored per UTC date (utc_day_number), with the
-- one or two runs [a0, b0] and [a1, b1] of local dates it reaches (a1 = a0: one run), as
-- day numbers (bucket_counts reads them as they are):
-- kind 0, rows of records written (both directions for a tiered location: a tier chain
-- counts both), reaching each local day its UTC date overlaps (one or two: a0 and a1), and
-- for a tiered location (the external table _chained) from each of them every later day of
-- its tier chain, to the end of the local month of that day + 3 days (b0, b1: a tiered day
-- depends on the days before it from three days before its local month: the tier period's
-- start in any tariff zone, less the lookback's day); kind 1, dated price changes of a
-- location, reaching the local days that overlap [date - 1 day, date + 1 day) (a bucket's
-- records may end up to a day after it; buckets whose records reach further are not
-- kept); kind 2, price changes of every date (stored as day 1970-01-01, e.g. a tariff
-- write), a0 = b0 = 0 (1970-01-01). A summing table may still hold a grain in several
-- rows; the batch's locations come as the external table _locs. Records are read from the
-- UTC date @u0 (@u0_chained for a tiered location, whose chains reach further). Each part
-- is one SELECT: 18.16 analyses a nested one again at every level, which cost more CPU
-- than reading a page's counts.
SELECT toUInt8(0) AS kind, location_id, device_id, n, toUInt32(day) AS utc_day_number,
    toUInt32((toDate(toDateTime(toUInt32(day) * 86400), @tz) AS l0)) AS a0,
    toUInt32(if((location_id IN (SELECT location_id FROM _chained)) AS chained, addDays(addMonths(toStartOfMonth(addDays(l0, 3)), 1), -1), l0)) AS b0,
    toUInt32((toDate(toDateTime(toUInt32(day) * 86400 + 86399), @tz) AS l1)) AS a1,
    toUInt32(if(chained, addDays(addMonths(toStartOfMonth(addDays(l1, 3)), 1), -1), l1)) AS b1
FROM reading_changes
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
    AND (device_id != '') = @devices AND (direction = @dir OR chained)
    AND day >= toDate(@u0_chained) AND day <= toDate(@u1) AND (day >= toDate(@u0) OR chained)
UNION ALL
SELECT toUInt8(if(day = toDate('1970-01-01'), 2, 1)) AS kind, location_id, '' AS device_id, n, toUInt32(day) AS utc_day_number,
    toUInt32(if(kind = 2, day, toDate(toDateTime(toUInt32(day) * 86400 - 86400), @tz))) AS a0,
    toUInt32(if(kind = 2, day, toDate(toDateTime(toUInt32(day) * 86400 + 86399), @tz))) AS b0, a0 AS a1, b0 AS b1
FROM price_changes
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
    AND (day = toDate('1970-01-01') OR (day >= toDate(@p0) AND day <= toDate(@p1)))
)
)
)
                    )
                )
                WHERE kind >= 2 OR a1 <= b1
            )
            WHERE kind < 3 OR (month >= toStartOfMonth(toDate(@d0)) AND month <= toDate(@d1))
        )
    )
)
GROUP BY kind, location_id, device_id, month_number
