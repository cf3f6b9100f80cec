{{define "bucket_states"}}
-- The priced buckets of one zone's locations (or devices) over the local days
-- [@d0, @d1], beside the change counts they depend on now (docs/costs.md, "Priced
-- buckets"): a row per day that has a stored bucket or any reading counted. A bucket is
-- valid when it was priced in this zone, tiered as now, under the counts there are now.
SELECT loc, dev, toString(day) AS date, stored, toUInt32(day_start) AS day_start, empty, n_import, n_export,
    energy, money, money_com, money_non, confidence, readings_seen, prices_seen, readings_now,
    prices_dated + prices_every AS prices_now,
    toUInt8(stored = 1 AND same_kind = 1 AND readings_seen = readings_now AND prices_seen = prices_now) AS valid
FROM
(
    SELECT loc, dev, day, stored, same_kind, day_start, empty, n_import, n_export, energy, money, money_com, money_non,
        confidence, readings_seen, prices_seen, readings_now, prices_dated
    FROM
    (
        -- Stored buckets and reading counts side by side (UNION ALL, then one row a day:
        -- a FULL JOIN does the same on current releases, not on 18.16).
        SELECT loc, dev, day, max(b_stored) AS stored, max(b_same_kind) AS same_kind, max(b_day_start) AS day_start,
            max(b_empty) AS empty, max(b_n_import) AS n_import, max(b_n_export) AS n_export,
            sum(b_energy) AS energy, sum(b_money) AS money, sum(b_money_com) AS money_com, sum(b_money_non) AS money_non,
            max(b_confidence) AS confidence, max(b_readings_seen) AS readings_seen, max(b_prices_seen) AS prices_seen,
            sum(r_now) AS readings_now
        FROM
        (
            {{- template "stored_buckets"}}
            UNION ALL
            {{- template "reading_counts"}}
        )
        GROUP BY loc, dev, day
    ) AS counted
    ANY LEFT JOIN
    (
        {{- template "dated_price_counts"}}
    ) AS dated USING (loc, day)
) AS checked
ANY LEFT JOIN
(
    -- Price changes that touch every date of a location (tariff writes).
    SELECT location_id AS loc, sum(n) AS prices_every
    FROM price_changes
    WHERE account_id = @account AND live_mode = @live AND location_id IN @locs AND day = toDate('1970-01-01')
    GROUP BY loc
) AS every USING (loc)
ORDER BY loc, dev, day
{{end}}

{{define "stored_buckets"}}
            -- The latest version of each stored bucket, whole (LIMIT 1 BY, not an argMax per
            -- column: two writes of one version must not mix).
            SELECT location_id AS loc, device_id AS dev, day, toUInt8(1) AS b_stored,
                toUInt8(zone = @tz AND tiered = @chained) AS b_same_kind,
                day_start AS b_day_start, empty AS b_empty, n_import AS b_n_import, n_export AS b_n_export,
                energy_wh AS b_energy, money AS b_money, money_commodity AS b_money_com, money_non_commodity AS b_money_non,
                confidence AS b_confidence, readings_seen AS b_readings_seen, prices_seen AS b_prices_seen,
                toUInt64(0) AS r_now
            FROM priced_buckets
            WHERE account_id = @account AND live_mode = @live AND location_id IN @locs
                AND (device_id != '') = @devices AND direction = @dir
                AND day >= toDate(@d0) AND day <= toDate(@d1)
                -- The window's part of its first and last day, when partial; else the whole day.
                AND span_from = transform(toUInt32(day), @span_days, @span_from, toUInt32(0))
                AND span_to = transform(toUInt32(day), @span_days, @span_to, toUInt32(0))
            ORDER BY loc, dev, day, version DESC
            LIMIT 1 BY loc, dev, day
{{end}}

{{define "reading_counts"}}
            -- Rows written per local day now. A count's UTC date reaches the one or two local
            -- days it overlaps; a tiered location's day depends on every day of its tier
            -- chain (both directions, from three days before its local month: the tier
            -- period's start in any tariff zone, less the lookback's day), so a count reaches
            -- every later day of the chain too.
            SELECT loc, dev, bday AS day, toUInt8(0), toUInt8(0), toDateTime(0, 'UTC'), toUInt8(0), toUInt64(0),
                toUInt64(0), 0., 0., 0., 0., 0., toUInt64(0), toUInt64(0), sum(n) AS r_now
            FROM
            (
                SELECT location_id AS loc, device_id AS dev, n,
                    toUInt32(day) * 86400 AS u0,
                    toDate(toDateTime(u0), @tz) AS l0, toDate(toDateTime(u0 + 86399), @tz) AS l1,
                    arrayJoin(if(l0 = l1, [l0], [l0, l1])) AS lday,
                    toUInt32(if(@chained = 1, toStartOfMonth(addMonths(lday + 3, 1)) - lday, 1)) AS reach,
                    -- (No lambda captures a column: 18.16 cannot resolve captures here.)
                    arrayJoin(arrayMap((i, d) -> d + i, range(reach), arrayResize([lday], reach, lday))) AS bday
                FROM reading_changes
                WHERE account_id = @account AND live_mode = @live AND location_id IN @locs
                    AND (device_id != '') = @devices AND (direction = @dir OR @chained = 1)
                    AND day >= toDate(@u0) AND day <= toDate(@u1)
            )
            WHERE bday >= toDate(@d0) AND bday <= toDate(@d1)
            GROUP BY loc, dev, day
{{end}}

{{define "dated_price_counts"}}
        -- Price changes per local day now. A bucket's records may end up to a day after it
        -- (buckets whose records reach further are not kept): a change on a UTC date touches
        -- the local days that overlap [date - 1 day, date + 1 day).
        SELECT loc, bday AS day, sum(n) AS prices_dated
        FROM
        (
            SELECT location_id AS loc, n, toUInt32(day) * 86400 AS u0,
                toDate(toDateTime(u0 - 86400), @tz) AS l0, toDate(toDateTime(u0 + 86399), @tz) AS l1,
                toUInt32(l1 - l0 + 1) AS k,
                arrayJoin(arrayMap((i, d) -> d + i, range(k), arrayResize([l0], k, l0))) AS bday
            FROM price_changes
            WHERE account_id = @account AND live_mode = @live AND location_id IN @locs
                AND day >= toDate(@p0) AND day <= toDate(@p1)
        )
        WHERE bday >= toDate(@d0) AND bday <= toDate(@d1)
        GROUP BY loc, day
{{end}}
