-- Fingerprints of the rows a fleet query would price, read as stored (as the undeduplicated
-- fleet queries read them), per bucket; for tiered locations, whose counters read both
-- directions from the tier lookback on, of both directions, and of the lookback. A cached
-- priced bucket is reused only while its fingerprints are the ones its pricing query read.
WITH toUInt32(start_time) AS rs
SELECT location_id AS loc, device_id AS dev,
    toUInt32(toStartOfDay(toDateTime(rs), @tz)) AS k,
    sum(cityHash64(direction, tariff_rate, start_time, end_time, energy_wh, confidence, version)) AS fp
FROM meter_records
WHERE account_id = @account AND live_mode = @live AND location_id IN @locs
    AND device_id = ''
    AND direction = @dir AND start_time >= toDateTime(@w0) AND start_time < toDateTime(@w1)
GROUP BY loc, dev, k
