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
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
    AND (device_id != '') = @devices AND direction = @dir
    AND day >= toDate(@d0) AND day <= toDate(@d1)
    AND span_from = transform(toUInt32(day), @span_days, @span_from, toUInt32(0))
    AND span_to = transform(toUInt32(day), @span_days, @span_to, toUInt32(0))
