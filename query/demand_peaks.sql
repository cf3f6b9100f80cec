{{define "demand_stored"}}
-- The kept demand peaks of some locations in one direction, for the local months starting
-- in [@m0, @m1] (docs/costs.md, "Bill charges"): the latest version of each (location,
-- month, tariff key), with the reading change count it was measured under.
SELECT location_id, toUInt32(month_start) AS month, tariff_key,
    argMax(peaks, version) AS peaks, argMax(readings_seen, version) AS seen
FROM demand_peaks
WHERE account_id = @account AND live_mode = @live AND location_id IN @locs AND direction = @dir
    AND month_start >= toDateTime(@m0) AND month_start <= toDateTime(@m1)
GROUP BY location_id, month_start, tariff_key
{{end}}

{{define "demand_counts"}}
-- The reading change counts (reading_changes) of some locations' location-level readings
-- in one direction, per month of the answer: month k adds up the UTC dates with day
-- numbers in [@lo[k], @hi[k]], which hold every reading its peaks are measured from in
-- its zone (demand_peaks.go). ARRAY JOIN sends a date to each month holding it (the
-- ranges of neighbouring months or zones overlap), so the answer is a row per location and
-- month, not per date.
SELECT location_id, k, sum(n) AS n
FROM reading_changes
ARRAY JOIN arrayFilter(i -> toUInt32(day) >= arrayElement(@lo, i) AND toUInt32(day) <= arrayElement(@hi, i),
    arrayEnumerate(@lo)) AS k
WHERE account_id = @account AND live_mode = @live AND location_id IN @locs AND device_id = '' AND direction = @dir
    AND day >= toDate(@d0) AND day <= toDate(@d1)
GROUP BY location_id, k
{{end}}
