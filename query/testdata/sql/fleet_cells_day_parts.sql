-- Fingerprints of the rows one zone's fleet queries would price, read as stored (as the
-- undeduplicated fleet queries read them), per bucket and whether of the asked direction
-- (mine): untiered locations' buckets are their rows of that direction; tiered ones',
-- whose counters read both, of both. A cached priced bucket is reused only while its
-- fingerprints are the ones its pricing query read. (One read of every location's window:
-- reading the tiered ones apart met the others' granules, and ORed conditions read more.)
WITH toUInt32(start_time) AS rs
SELECT location_id AS loc, device_id AS dev, toUInt32(toStartOfDay(toDateTime(rs), @tz)) AS k, toUInt8(direction = @dir) AS mine,
    sum(cityHash64(direction, tariff_rate, start_time, end_time, energy_wh, confidence, version)) AS fp, _part AS part
FROM meter_records
WHERE account_id = @account AND live_mode = @live
    -- (Left out when the fleet is every location of the scope: parsing 1,000 ids took 15 ms.)
    AND location_id IN @locs
    AND device_id = ''
    AND start_time >= toDateTime(@w0) AND start_time < toDateTime(@w1)
    -- Only the parts not read before: a part never changes, so its sums are kept (fleet_parts.go).
    AND _part IN @parts
GROUP BY loc, dev, k, mine, part
