-- The location-level readings of some locations in one direction starting in
-- [@lookback, @w1), one row of arrays per location: the whole local months that demand
-- charges are measured over. The readings are the cost queries' own (readings.sql, with
-- FINAL: on 18.16 the argMax GROUP BY of a 50-location year took 3.9–4.3 s); Go splits
-- them into local-clock intervals (docs/costs.md, "Bill charges").
SELECT loc, groupArray(rs) AS rss, groupArray(re) AS res, groupArray(e) AS es
FROM (-- The readings: the latest version of each, by FINAL (every filter is on a key
    -- column; for large batches: on 18.16 a 900-location month took 795 ms with FINAL's merge
    -- of sorted parts, 960 ms with argMax; 100 locations 466 against 168 ms).
    SELECT location_id AS loc, device_id AS dev, toString(direction) AS dir,
        toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
        toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
        energy_wh AS e, confidence AS rc
    FROM meter_records FINAL
    WHERE account_id = @account AND live_mode = @live AND location_id IN @locs
        AND device_id = ''
        AND direction = @dir
        AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w1)
)
GROUP BY loc
