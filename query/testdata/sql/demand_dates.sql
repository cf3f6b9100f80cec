-- The change counts now of the location-level readings of one direction of the locations
-- of _locs, per UTC date of [@d0, @d1] (reading_changes: rows written, never decreasing):
-- read after the month reach fingerprints (month_prints.sql), so that every write those
-- count is counted here too.
SELECT location_id, toUInt32(day) AS date, sum(n) AS n
FROM reading_changes
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs) AND device_id = ''
    AND direction = @dir AND day >= toDate(@d0) AND day <= toDate(@d1)
GROUP BY location_id, date
