{{define "bucket_stored"}}
-- The stored priced buckets of one zone's locations (or devices) over the local days
-- [@d0, @d1], every version (docs/costs.md, "Priced buckets"): the reader keeps each
-- bucket's latest version whole, so two writes of one version never mix. The batch's
-- locations come as the external table _locs. A window that starts or ends inside a
-- local day reads that part's bucket (its bounds by day number: @span_days), else the
-- whole day's.
SELECT location_id, device_id, toUInt32(day) AS day_number, toUInt8(zone = @tz AND tiered = @chained) AS same_kind,
    toUInt32(day_start) AS day_start, empty,
    n_import, n_export, energy_wh, money, money_commodity, money_non_commodity, confidence, readings_seen, prices_seen, version
FROM priced_buckets
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
    AND (device_id != '') = @devices AND direction = @dir
    AND day >= toDate(@d0) AND day <= toDate(@d1)
    AND span_from = transform(toUInt32(day), @span_days, @span_from, toUInt32(0))
    AND span_to = transform(toUInt32(day), @span_days, @span_to, toUInt32(0))
{{end}}

{{define "bucket_counts"}}
-- The change counts the buckets of one zone's locations (or devices) depend on, as
-- stored per UTC date (docs/costs.md, "Priced buckets"): kind 0, rows of records written
-- (both directions for a tiered batch: a tier chain counts both); kind 1, price changes
-- of a location (day 0: a change of every date, e.g. a tariff write). The reader adds
-- them up per local day (bucket_states.go); a summing table may still hold a grain in
-- several rows. The batch's locations come as the external table _locs.
SELECT toUInt8(0) AS kind, location_id, device_id, toUInt32(day) AS day_number, n
FROM reading_changes
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
    AND (device_id != '') = @devices AND (direction = @dir OR @chained = 1)
    AND day >= toDate(@u0) AND day <= toDate(@u1)
UNION ALL
SELECT toUInt8(1) AS kind, location_id, '' AS device_id, toUInt32(day) AS day_number, n
FROM price_changes
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
    AND (day = toDate('1970-01-01') OR (day >= toDate(@p0) AND day <= toDate(@p1)))
{{end}}
