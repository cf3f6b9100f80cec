{{define "demand_stored"}}
-- The kept demand peaks of some locations (the external table _locs) in one direction, for
-- the local months starting in [@m0, @m1] (docs/costs.md, "Bill charges"): the latest
-- version of each (location, month, tariff key), with the reading change count it was
-- measured under. Only tariff keys starting with @kept_prefix (peaks kept under the counts
-- demand_counts reads).
SELECT location_id, toUInt32(month_start) AS month, tariff_key,
    argMax(peaks, version) AS peaks, argMax(readings_seen, version) AS seen
FROM demand_peaks
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs) AND direction = @dir
    AND month_start >= toDateTime(@m0) AND month_start <= toDateTime(@m1)
    AND substring(tariff_key, 1, length(@kept_prefix)) = @kept_prefix
GROUP BY location_id, month_start, tariff_key
{{end}}

{{define "demand_counts"}}
-- The reading change counts of some locations' location-level readings in one direction
-- (the external table _locs), by the local days of @tz they reach: count_ranges, the one
-- definition (buckets.sql; no location in _chained and @devices = 0, so each run is one day, a = b),
-- as fingerprints per local month (count × day_weight summed, as count_months), split into
-- the month's last two days (tail = 1) and the others. A month's peaks are measured from
-- the readings starting from a day before it, so they hold while the counts of each of its
-- own days and of the last two days of the month before are unchanged (demand_peaks.go
-- adds the fingerprints up: equal when every day's count is).
SELECT location_id, toUInt32(toStartOfMonth(a)) AS month,
    toUInt8(toStartOfMonth(addDays(a, 2)) != toStartOfMonth(a)) AS tail, sum(n * {{template "day_weight" "a"}}) AS n
FROM ({{template "count_ranges"}})
WHERE kind = 0
GROUP BY location_id, month, tail
{{end}}
