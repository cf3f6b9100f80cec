-- The change counts the buckets of one zone's locations (or devices) depend on, one row
-- per count as stored with the one or two runs of local days it reaches (day numbers):
-- count_dates itself, read as it is (a SELECT around it cost 18.16 about 5 ms of CPU a read, whatever
-- the batch's size). The reader adds them up per local day (bucket_states.go).
-- The batch's locations come as the external table _locs.
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
