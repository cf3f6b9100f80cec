-- The asked readings of one scope with their local day, for weighing by carbon intensity
-- in Go (carbon.Weigh); the day is the expression fleet_key buckets by, so keys match.
SELECT rs, re, e, rc, tr, toUInt32(toStartOfDay(toDateTime(rs), @tz)) AS day
FROM
(
    -- The readings: the latest version of each, by argMax (small batches, one
    -- location: on 18.16 FINAL made one location's month ~8x slower, 105–215 ms against 18 ms).
    SELECT location_id AS loc, transform(loc, @act_loc, @act_n, toUInt32(0)) AS li, device_id AS dev, toString(direction) AS dir,
        toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
        toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
        argMax(energy_wh, version) AS e, argMax(confidence, version) AS rc,
        argMax(session_reference_id, version) AS sess, argMax(record_reference_id, version) AS ref
    FROM meter_records
    -- The locations first: where they are a few of those in the granules read (a tiered
    -- batch of every tenth location), the other columns are read for their rows only (a
    -- fleet month's 100 tiered locations on 18.16: 56-72 ms of CPU reading, 76-90 ms in WHERE).
    PREWHERE location_id IN @locs
    -- The scope narrows the key range read, and is not compared row by row: a record's
    -- location is always its own scope's (ingest refuses any other, and ids are random,
    -- never reused), and @locs are the scope's own, so location_id IN @locs keeps the
    -- rows to the scope (docs/costs.md, "Scope of a cost query"). On 18.16 the comparison
    -- took 65 of 380 ms of a cold fleet month's untiered statement on one thread.
    WHERE indexHint(account_id = @account AND live_mode = @live)
        AND device_id = ''
        AND direction = @dir
        AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w1)
    GROUP BY location_id, device_id, direction, tariff_rate, start_time, end_time
    -- One session's readings (tiered, every reading runs the counters: is_out picks them).
    HAVING sess = @session
)
