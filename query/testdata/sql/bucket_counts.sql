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
