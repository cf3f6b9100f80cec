-- Fingerprints of the rows a fleet query would price, read as stored (as the undeduplicated
-- fleet queries read them), per bucket; for tiered locations, whose counters read both
-- directions from the tier lookback on, of both directions, and of the lookback. A cached
-- priced bucket is reused only while its fingerprints are the ones its pricing query read.
WITH toUInt32(start_time) AS rs
SELECT location_id AS loc, device_id AS dev,
    -- The lookback's rows as one bucket after every other (fleet_cache.go chains them).
    if(rs < @w0, toUInt32(4294967295), toUInt32(toDateTime(toStartOfMonth(toDateTime(rs), @tz), @tz))) AS k,
    sum(cityHash64(direction, tariff_rate, start_time, end_time, energy_wh, confidence, version)) AS fp
FROM meter_records
WHERE account_id = @account AND live_mode = @live AND location_id IN @locs
    AND device_id = ''
    AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w1)
    AND toUInt32(start_time) >= transform(location_id, @act_loc, @lookbacks, toUInt32(0))
GROUP BY loc, dev, k
