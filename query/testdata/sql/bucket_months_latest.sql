-- bucket_months of months that hold two versions of a bucket (one written again, not yet
-- merged: ClickHouse merges priced_buckets in its own time), each bucket's latest version
-- only (FINAL: ReplacingMergeTree's version; every filter of batch_buckets is on the sorting
-- key, so it holds before or after the merge). Only for those months: on 18.16 FINAL cost a
-- year of 1,000 locations 3× the CPU and 15× the memory of bucket_months (about 300 ms and
-- 640 MB), a re-priced month of them about 30 ms (docs/costs.md, "MONTH and NONE answers").
-- The stored priced buckets of each local day of [@d0, @d1] of one zone's locations (or
-- devices), summed per local month (docs/costs.md, "Priced buckets"): how many rows and
-- which days (day_mask: bit n for day n), the least of "priced in the zone, tiered as the
-- location is now" (the tiered ones come as the external table _chained), the counts each
-- row was priced under as fingerprints (count_months: readings_print, prices_print) with
-- the sum of their days' weights (weights), and their money (an empty bucket's is 0). A
-- bucket written again leaves its older version until a merge: a month with more rows than
-- days is read again by bucket_months_latest. A window that starts or ends inside a local
-- day reads that part's bucket (as bucket_stored). The locations come as the external
-- table _locs. With "FINAL" as its argument, each bucket's latest version only.
SELECT location_id, device_id, toUInt32(toStartOfMonth(day)) AS month_number, count() AS days,
    min(toUInt8(zone = @tz AND tiered = (location_id IN (SELECT location_id FROM _chained)))) AS same_kind,
    sum(readings_seen * bitOr(intHash64(toUInt32(day)), toUInt64(1))) AS readings_print,
    sum(prices_seen * bitOr(intHash64(toUInt32(day)), toUInt64(1))) AS prices_print, sum(bitOr(intHash64(toUInt32(day)), toUInt64(1))) AS weights,
    groupBitOr(bitShiftLeft(toUInt64(1), toDayOfMonth(day))) AS day_mask,
    countIf(empty = 0) AS served, sum(energy_wh) AS energy_wh, sum(money) AS money,
    sum(money_commodity) AS money_commodity, sum(money_non_commodity) AS money_non_commodity,
    minIf(confidence, empty = 0) AS confidence, sum(n_import) AS n_import, sum(n_export) AS n_export
FROM priced_buckets FINAL
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
    AND (device_id != '') = @devices AND direction = @dir
    AND day >= toDate(@d0) AND day <= toDate(@d1)
    AND span_from = transform(toUInt32(day), @span_days, @span_from, toUInt32(0))
    AND span_to = transform(toUInt32(day), @span_days, @span_to, toUInt32(0))
GROUP BY location_id, device_id, month_number
