-- The latest version of each location-level reading of some locations in one direction
-- starting in [@w0, @w1) — argMax by version over the reading's key, as cost_records.sql
-- reads them — in location order: the whole local months that demand charges are
-- measured over. The charges package splits them into local-clock intervals in Go
-- (docs/costs.md, "Bill charges"). No FINAL: see cost_records.sql.
SELECT location_id AS loc, toUInt32(start_time) AS rs, toUInt32(end_time) AS re, argMax(energy_wh, version) AS e
FROM meter_records
WHERE account_id = @account AND live_mode = @live AND location_id IN @locs AND device_id = ''
    AND toString(direction) = @dir AND start_time >= toDateTime(@w0) AND start_time < toDateTime(@w1)
GROUP BY location_id, tariff_rate, start_time, end_time
ORDER BY loc
