-- Every stored version of the location-level readings of some locations in one direction
-- starting in [@w0, @w1), one row of arrays per location: the whole local months that
-- demand charges are measured over. Go keeps the latest version of each reading (its key
-- within the location is tariff_rate, start, end; as cost_records.sql) and splits them into
-- local-clock intervals (docs/costs.md, "Bill charges"). Not argMax or FINAL here: on
-- 18.16 the argMax GROUP BY of a 50-location year took 3.9–4.3 s, these arrays 0.97 s.
SELECT location_id AS loc,
    groupArray(toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3))) AS trs,
    groupArray(toUInt32(start_time)) AS rss, groupArray(toUInt32(end_time)) AS res,
    groupArray(energy_wh) AS es, groupArray(version) AS vs
FROM meter_records
WHERE account_id = @account AND live_mode = @live AND location_id IN @locs AND device_id = ''
    AND toString(direction) = @dir AND start_time >= toDateTime(@w0) AND start_time < toDateTime(@w1)
GROUP BY location_id
