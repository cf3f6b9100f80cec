-- Fingerprints of the rows one zone's fleet queries would price, read as stored (as the
-- undeduplicated fleet queries read them), per bucket: of the asked direction for untiered
-- locations; for tiered ones, whose counters read both directions from the tier lookback
-- on, of both, with the lookback's rows as one more bucket. A cached priced bucket is
-- reused only while its fingerprints are the ones its pricing query read.
WITH toUInt32(start_time) AS rs
SELECT location_id AS loc, device_id AS dev,
    if(rs < @w0, toUInt32(4294967295), toUInt32(toStartOfDay(toDateTime(rs), @tz))) AS k,
    sum(cityHash64(direction, tariff_rate, start_time, end_time, energy_wh, confidence, version)) AS fp
FROM meter_records
WHERE account_id = @account AND live_mode = @live AND device_id = ''
    AND location_id IN @locs AND start_time < toDateTime(@w1)
    AND direction = @dir AND start_time >= toDateTime(@w0)
GROUP BY loc, dev, k
-- Tiered buckets chain in this order (fleet_prints.go).
ORDER BY loc, dev, k
