{{define "month_prints"}}
-- The fingerprints now of the change counts each local month of [@m0, @m1] (first days)
-- of a batch's locations (or devices) can depend on, over the month's reach (the UTC dates
-- [first day - 4 days, last day + 2 days]: reachMonths, chstore/fingerprint.go), the
-- batch's locations as the external table _locs, the tiered ones as _chained:
-- kind 0, the records written (reading_changes_by_month) of @dir, and kind 5, those of the
-- other direction (a tiered location's, whose months count both; apart, so that demand
-- peaks, kept under @dir's alone, can be served from the same read); kind 1, the
-- location's dated price changes (price_changes) × their date's day_weight; kind 2, its
-- price changes of every date, summed once under month 1970-01-01 (total). count_months
-- reports the same figures from its own rows (kinds 3, 4 and 2) when it verifies a month.
SELECT kind, location_id, device_id, toUInt32(month) AS month_number, sum(n) AS total, sum(print) AS print
FROM (
    SELECT toUInt8(if(direction = @dir, 0, 5)) AS kind, location_id, device_id, month, n, print
    FROM reading_changes_by_month
    WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
        AND (device_id != '') = @devices AND (direction = @dir OR location_id IN (SELECT location_id FROM _chained))
        AND month >= toDate(@m0) AND month <= toDate(@m1)
    UNION ALL
    SELECT toUInt8(if(day = toDate('1970-01-01'), 2, 1)) AS kind, location_id, '' AS device_id,
        arrayJoin(if(kind = 2, [day], {{reachMonths "day"}})) AS month, n, n * {{template "day_weight" "day"}} AS print
    FROM price_changes
    WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
        AND (day = toDate('1970-01-01') OR (day >= addDays(toDate(@m0), -4) AND day <= addDays(addMonths(toDate(@m1), 1), 1)))
)
WHERE kind = 2 OR (month >= toDate(@m0) AND month <= toDate(@m1))
GROUP BY kind, location_id, device_id, month_number
{{end}}
