-- Fingerprints of the rows before the window that tiered locations' counters read (both
-- directions, from each one's tier lookback), per location and device.
SELECT location_id AS loc, device_id AS dev, sum(cityHash64(direction, tariff_rate, start_time, end_time, energy_wh, confidence, version)) AS fp
FROM meter_records
-- A few tiered locations share granules with many others: their ids are checked before
-- the other columns are read (100 of 1,000 locations on 18.16: 78 ms, 104 ms without).
PREWHERE location_id IN @locs
WHERE account_id = @account AND live_mode = @live AND location_id IN @locs
    AND device_id != ''
    AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w0)
    AND toUInt32(start_time) >= transform(location_id, @locs_arr, @lookbacks, toUInt32(0))
GROUP BY loc, dev
