{{define "month_stored"}}
-- The priced months kept of a batch's locations (or devices), direction @dir and local
-- months [@m0, @m1] (first days), the latest version of each (docs/costs.md, "Priced
-- months"): their sums, whether they were priced in the zone @tz and tiered as the
-- location is now (the tiered ones come as the external table _chained), and the reach
-- fingerprints they were verified under. The locations come as the external table _locs.
SELECT location_id, device_id, toUInt32(month) AS month_number,
    toUInt8(zone = @tz AND tiered = (location_id IN (SELECT location_id FROM _chained))) AS same_kind,
    served, energy_wh, money, money_commodity, money_non_commodity, confidence, n_import, n_export,
    readings_print, prices_print, prices_every
FROM priced_months
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
    AND (device_id != '') = @devices AND direction = @dir AND month >= toDate(@m0) AND month <= toDate(@m1)
ORDER BY location_id, device_id, month_number, version DESC
LIMIT 1 BY location_id, device_id, month_number
{{end}}
