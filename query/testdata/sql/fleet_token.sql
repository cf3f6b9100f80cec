-- The state token of a fleet answer (docs/costs.md, "Answer cache"): what every input of
-- an answer of the scope over a window has recorded so far, one row per part (.From: per
-- part and location), each a count and a weighted sum (uint64 arithmetic wraps, so the
-- sums of a location range add up from its locations' rows). Part 0, the meter record
-- rows written (reading_changes_by_month: both directions, location and device level)
-- over the reach of the months [@m0, @m1], which holds every UTC date whose records a
-- window's answer reads (its tier lookback included); each object's fingerprint times an
-- odd weight of the object, so two replicas that each lack another write never add up to
-- the same sum. Part 1, the price changes (price_changes) dated [@p0, @p1] and of every
-- date (1970-01-01), each count times its date's and its location's weights. Part 2, the
-- scope's documents an answer reads: how many, and a sum of a hash of each one's latest
-- version (FINAL: ReplacingMergeTree's latest version of each id, what the catalog's
-- reads take; a write or a delete gives its document a new latest version, and a merge,
-- which drops older versions only, changes neither; every filter is on the sorting key,
-- so it holds before or after the merge). An answer's rows and skipped come from the
-- locations with records in part 0's reach alone, and a location's first record there
-- moves part 0 (docs/costs.md, "Answer cache"): so over every location of the scope
-- parts 1 and 2 count only the price changes and location documents of those locations
-- (token_recorded), and a request naming locations or a customer (.Named) counts every
-- document of the scope. The rows of a later page by id (.From) are its locations', from
-- @lo on only, up to @hi and @next (.Upto), and of the documents only theirs: every table
-- here is ordered by location (documents by id), so its range is an index range; its
-- reader keeps the rows of the locations with part 0's (tokenOf): four SELECTs, not the
-- seven that token_recorded read for parts 1 and 2 makes (18.16 spends 1.5-2.5 ms of CPU
-- on each, however few rows it reads). The count parts are one SELECT each: 18.16
-- analyses a nested one again at every level.
SELECT toUInt8(0) AS part, '' AS loc, sum(n) AS total,
    sum(print * bitOr(cityHash64(location_id, device_id, toUInt8(direction)), toUInt64(1))) AS weighted
FROM reading_changes_by_month
WHERE account_id = @account AND live_mode = @live AND month >= toDate(@m0) AND month <= toDate(@m1)
UNION ALL
-- Part 3, the same rows' per-date counts (reading_changes) over the same reach, [@r0, @r1]:
-- one insert's views write the two tables one after the other (18.16 in the order of the
-- views' names), and an answer reads both (bucket_counts the dates', month_prints the
-- months'), so a token read between the two writes must differ from the token after both.
SELECT toUInt8(3) AS part, '' AS loc, sum(n) AS total,
    sum(n * bitOr(intHash64(toUInt32(day)), toUInt64(1)) * bitOr(cityHash64(location_id, device_id, toUInt8(direction)), toUInt64(1))) AS weighted
FROM reading_changes
WHERE account_id = @account AND live_mode = @live AND day >= toDate(@r0) AND day <= toDate(@r1)
UNION ALL
SELECT toUInt8(1) AS part, '' AS loc, sum(n) AS total,
    sum(n * bitOr(intHash64(toUInt32(day)), toUInt64(1)) * bitOr(cityHash64(location_id), toUInt64(1))) AS weighted
FROM price_changes
WHERE account_id = @account AND live_mode = @live
    AND (day = toDate('1970-01-01') OR (day >= toDate(@p0) AND day <= toDate(@p1)))
    AND location_id GLOBAL IN (SELECT location_id FROM reading_changes_by_month
        WHERE account_id = @account AND live_mode = @live AND month >= toDate(@m0) AND month <= toDate(@m1))
UNION ALL
SELECT toUInt8(2) AS part, '' AS loc, count() AS total, sum(intHash64(version)) AS weighted
FROM documents FINAL
WHERE account_id = @account AND live_mode = @live
    AND kind = 'location'
    AND id GLOBAL IN (SELECT location_id FROM reading_changes_by_month
        WHERE account_id = @account AND live_mode = @live AND month >= toDate(@m0) AND month <= toDate(@m1))
-- A page's span (.From) is a granule or two of each part of each table's range: read by
-- one thread, its token took 8.8 ms of CPU and 16.5 ms where two took 9.9 ms and 18 ms
-- (18.16, 1,000 locations, medians of 20 interleaved, the machine busy). FINAL reads every
-- part of documents at once, each column through a read buffer of max_read_buffer_size
-- (1 MiB): with 64 KiB ones a page's token took 7-11 MiB of memory instead of 20 MiB and
-- the scope's 20-23 MiB instead of 28 MiB, for the same CPU (15 runs each, busy).
SETTINGS max_read_buffer_size = 65536
