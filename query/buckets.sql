{{define "bucket_stored"}}
-- The stored priced buckets of one zone's locations (or devices) over the local days
-- [@d0, @d1], every version (docs/costs.md, "Priced buckets"): the reader keeps each
-- bucket's latest version whole, so two writes of one version never mix. The batch's
-- locations come as the external table _locs. A window that starts or ends inside a
-- local day reads that part's bucket (its bounds by day number: @span_days), else the
-- whole day's. The batch may mix tiered and untiered locations: the tiered ones come as
-- the external table _chained.
SELECT location_id, device_id, toUInt32(day) AS day_number,
    toUInt8(zone = @tz AND tiered = (location_id IN (SELECT location_id FROM _chained))) AS same_kind,
    toUInt32(day_start) AS day_start, empty,
    n_import, n_export, energy_wh, money, money_commodity, money_non_commodity, confidence, readings_seen, prices_seen, version
FROM priced_buckets
{{template "batch_buckets"}}
{{end}}

{{define "bucket_counts"}}
-- The change counts the buckets of one zone's locations (or devices) depend on, one row
-- per count as stored with the one or two runs of local days it reaches (day numbers):
-- count_dates itself, read as it is (a SELECT around it cost 18.16 about 5 ms of CPU a read, whatever
-- the batch's size). The reader adds them up per local day (bucket_states.go).
-- The batch's locations come as the external table _locs.
{{template "count_dates"}}
{{end}}

{{define "count_ranges"}}
-- The runs of local days of @tz the change counts reach (count_dates), one row a run:
-- [a, b], the UTC date it counts (utc_day) and whether it is that date's first run (lead:
-- a date reaching two local days makes two rows).
SELECT kind, location_id, device_id, addDays(toDate('1970-01-01'), if(r = 0, a0, a1)) AS a,
    addDays(toDate('1970-01-01'), if(r = 0, b0, b1)) AS b, n, addDays(toDate('1970-01-01'), utc_day_number) AS utc_day,
    toUInt8(r = 0) AS lead
FROM (
    SELECT kind, location_id, device_id, n, utc_day_number, a0, b0, a1, b1,
        arrayJoin(if(a0 = a1, [toUInt8(0)], [toUInt8(0), toUInt8(1)])) AS r
    FROM ({{template "count_dates"}})
)
{{end}}

{{define "count_dates"}}
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
{{end}}

{{define "count_months"}}
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
        if(kind >= 3, {{template "day_weight" "utc_day"}}, if(kind != 0, toUInt64(0), if(s = e, {{template "day_weight" "s"}},
            arraySum(arrayMap(i -> {{template "day_weight" "addDays(s, i)"}}, range(if(kind = 0, run_days, toUInt32(0)))))))) AS weights,
        arrayMap(i -> toUInt8(toDayOfMonth(s) + i), range(if(kind = 1, run_days, toUInt32(0)))) AS dom,
        arrayMap(i -> n * {{template "day_weight" "addDays(s, i)"}}, range(length(dom))) AS dom_print
    FROM (
        SELECT kind, location_id, device_id, n, month, s, e, utc_day,
            toUInt32(if(kind >= 2, 0, toUInt32(e) - toUInt32(s) + 1)) AS run_days
        FROM (
            SELECT kind, location_id, device_id, n, month, utc_day,
                greatest(a1, month) AS s, least(b1, addDays(addMonths(month, 1), -1)) AS e
            FROM (
                SELECT kind, location_id, device_id, n, a1, b1, utc_day,
                    arrayJoin(if(kind = 2, [a], if(kind >= 3, {{reachMonths "utc_day"}},
                        if(toStartOfMonth(a1) = toStartOfMonth(b1), [toStartOfMonth(a1)],
                        [toStartOfMonth(a1), toStartOfMonth(b1)])))) AS month
                FROM (
                    SELECT toUInt8(if(r = 1, k + 3, k)) AS kind, location_id, device_id, n, a, utc_day,
                        greatest(a, toDate(@d0)) AS a1, least(b, toDate(@d1)) AS b1
                    FROM (
                        SELECT kind AS k, location_id, device_id, n, a, b, utc_day,
                            arrayJoin(if(kind != 2 AND lead = 1, [toUInt8(0), toUInt8(1)], [toUInt8(0)])) AS r
                        FROM ({{template "count_ranges"}})
                    )
                )
                WHERE kind >= 2 OR a1 <= b1
            )
            WHERE kind < 3 OR (month >= toStartOfMonth(toDate(@d0)) AND month <= toDate(@d1))
        )
    )
)
GROUP BY kind, location_id, device_id, month_number
{{end}}

{{define "day_weight"}}
{{- /* The weight of a local date in a month's fingerprint (count_months, bucket_months):
chstore.DayWeight, the one definition the schema's views render too. */ -}}
{{dayWeight .}}{{end}}

{{define "bucket_months"}}
-- The stored priced buckets of each local day of [@d0, @d1] of one zone's locations (or
-- devices), summed per local month (docs/costs.md, "Priced buckets"): how many rows and
-- which days (day_mask: bit n for day n), the least of "priced in the zone, tiered as the
-- location is now" (the tiered ones come as the external table _chained), the counts each
-- row was priced under as fingerprints (count_months: readings_print, prices_print) with
-- the sum of their days' weights (weights), and their money (an empty bucket's is 0). A
-- bucket written again leaves its older version until a merge: a month with more rows than
-- days is read again by bucket_months_latest. A window that starts or ends inside a local
-- day reads that part's bucket (as bucket_stored). The locations come as the external
-- table _locs. With "FINAL" as its argument, each bucket's latest version only.
SELECT location_id, device_id, toUInt32(toStartOfMonth(day)) AS month_number, count() AS days,
    min(toUInt8(zone = @tz AND tiered = (location_id IN (SELECT location_id FROM _chained)))) AS same_kind,
    sum(readings_seen * {{template "day_weight" "day"}}) AS readings_print,
    sum(prices_seen * {{template "day_weight" "day"}}) AS prices_print, sum({{template "day_weight" "day"}}) AS weights,
    groupBitOr(bitShiftLeft(toUInt64(1), toDayOfMonth(day))) AS day_mask,
    countIf(empty = 0) AS served, sum(energy_wh) AS energy_wh, sum(money) AS money,
    sum(money_commodity) AS money_commodity, sum(money_non_commodity) AS money_non_commodity,
    minIf(confidence, empty = 0) AS confidence, sum(n_import) AS n_import, sum(n_export) AS n_export
FROM priced_buckets{{if .}} FINAL{{end}}
{{template "batch_buckets"}}
GROUP BY location_id, device_id, month_number
{{end}}

{{define "bucket_months_latest"}}
-- bucket_months of months that hold two versions of a bucket (one written again, not yet
-- merged: ClickHouse merges priced_buckets in its own time), each bucket's latest version
-- only (FINAL: ReplacingMergeTree's version; every filter of batch_buckets is on the sorting
-- key, so it holds before or after the merge). Only for those months: on 18.16 FINAL cost a
-- year of 1,000 locations 3× the CPU and 15× the memory of bucket_months (about 300 ms and
-- 640 MB), a re-priced month of them about 30 ms (docs/costs.md, "MONTH and NONE answers").
{{template "bucket_months" "FINAL"}}
{{end}}

{{define "batch_buckets"}}
{{- /* The priced buckets of a batch (bucket_stored, bucket_months): its locations (the
external table _locs), direction and local days [@d0, @d1], each day's whole bucket or, on a
window's partial first or last day, that part's (its bounds by day number: @span_days). */ -}}
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
    AND (device_id != '') = @devices AND direction = @dir
    AND day >= toDate(@d0) AND day <= toDate(@d1)
    AND span_from = transform(toUInt32(day), @span_days, @span_from, toUInt32(0))
    AND span_to = transform(toUInt32(day), @span_days, @span_to, toUInt32(0)){{end}}
