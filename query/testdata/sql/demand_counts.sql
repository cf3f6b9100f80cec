-- The reading change counts of some locations' location-level readings in one direction
-- (the external table _locs), by the local days of @tz they reach: count_ranges, the one
-- definition (buckets.sql; no location in _chained and @devices = 0, so each run is one day, a = b),
-- as fingerprints per local month (count × day_weight summed, as count_months), split into
-- the month's last two days (tail = 1) and the others. A month's peaks are measured from
-- the readings starting from a day before it, so they hold while the counts of each of its
-- own days and of the last two days of the month before are unchanged (demand_peaks.go
-- adds the fingerprints up: equal when every day's count is).
SELECT location_id, toUInt32(toStartOfMonth(a)) AS month,
    toUInt8(toStartOfMonth(addDays(a, 2)) != toStartOfMonth(a)) AS tail, sum(n * bitOr(intHash64(toUInt32(a)), toUInt64(1))) AS n
FROM (
-- The one definition of the local days of @tz a change count reaches (docs/costs.md,
-- "Priced buckets"), as runs [a, b] of local dates, from the counts stored per UTC date:
-- kind 0, rows of records written (both directions for a tiered location: a tier chain
-- counts both), reaching each local day its UTC date overlaps (one or two), and for a
-- tiered location (the external table _chained) from each of them every later day of its
-- tier chain, to the
-- end of the local month of that day + 3 days (a tiered day depends on the days before it
-- from three days before its local month: the tier period's start in any tariff zone,
-- less the lookback's day); kind 1, dated price changes of a location, reaching the local
-- days that overlap [date - 1 day, date + 1 day) (a bucket's records may end up to a day
-- after it; buckets whose records reach further are not kept); kind 2, price changes of
-- every date (stored as day 1970-01-01, e.g. a tariff write), a = b = 1970-01-01. A
-- summing table may still hold a grain in several rows; the batch's locations come as the
-- external table _locs. Records are read from the UTC date @u0 (@u0_chained for a tiered
-- location, whose chains reach further). Each row also names the UTC date it counts
-- (utc_day) and whether it is that date's first row (lead: a date reaching two local days
-- makes two rows).
SELECT toUInt8(0) AS kind, location_id, device_id, l AS a,
    if(location_id IN (SELECT location_id FROM _chained), addDays(addMonths(toStartOfMonth(addDays(l, 3)), 1), -1), l) AS b, n,
    day AS utc_day, toUInt8(l = l0) AS lead
FROM (
    SELECT location_id, device_id, n, day, l0,
        arrayJoin(if(l0 = l1, [l0], [l0, l1])) AS l
    FROM (
        SELECT location_id, device_id, n, day,
            toDate(toDateTime(toUInt32(day) * 86400), @tz) AS l0,
            toDate(toDateTime(toUInt32(day) * 86400 + 86399), @tz) AS l1
        FROM reading_changes
        WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
            AND (device_id != '') = @devices AND (direction = @dir OR location_id IN (SELECT location_id FROM _chained))
            AND day >= toDate(@u0_chained) AND day <= toDate(@u1)
            AND (day >= toDate(@u0) OR location_id IN (SELECT location_id FROM _chained))
    )
)
UNION ALL
SELECT toUInt8(if(day = toDate('1970-01-01'), 2, 1)) AS kind, location_id, '' AS device_id,
    if(kind = 2, day, toDate(toDateTime(toUInt32(day) * 86400 - 86400), @tz)) AS a,
    if(kind = 2, day, toDate(toDateTime(toUInt32(day) * 86400 + 86399), @tz)) AS b, n, day AS utc_day, toUInt8(1) AS lead
FROM price_changes
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
    AND (day = toDate('1970-01-01') OR (day >= toDate(@p0) AND day <= toDate(@p1)))
)
WHERE kind = 0
GROUP BY location_id, month, tail
