-- The latest stored priced bucket of each local day of [@d0, @d1] of one zone's locations
-- (or devices), summed per local month (docs/costs.md, "Priced buckets"): how many days
-- have one, the least of "priced in the batch's zone, tiered as the batch is", the counts
-- they were priced under, and their money (an empty bucket's is 0). Each column is the
-- argMax by version of its bucket's rows: argMax keeps the first of equal versions, and
-- every column of a group sees the rows in one order, so all are of one row (two writes
-- of one version never mix). A window that starts or ends inside a local day reads that
-- part's bucket (as bucket_stored). The batch's locations come as the external table _locs.
SELECT location_id, device_id, toUInt32(toStartOfMonth(day)) AS month_number, count() AS days,
    min(same_kind) AS same_kind, sum(seen_r) AS readings_seen, sum(seen_p) AS prices_seen,
    groupBitOr(bitShiftLeft(toUInt64(1), toDayOfMonth(day))) AS day_mask,
    countIf(is_empty = 0) AS served, sum(e) AS energy_wh, sum(m) AS money, sum(mc) AS money_commodity,
    sum(mn) AS money_non_commodity, minIf(conf, is_empty = 0) AS confidence, sum(ni) AS n_import, sum(ne) AS n_export
FROM (
    SELECT location_id, device_id, day,
        argMax(toUInt8(zone = @tz AND tiered = @chained), version) AS same_kind,
        argMax(readings_seen, version) AS seen_r, argMax(prices_seen, version) AS seen_p,
        argMax(empty, version) AS is_empty, argMax(energy_wh, version) AS e, argMax(money, version) AS m,
        argMax(money_commodity, version) AS mc, argMax(money_non_commodity, version) AS mn,
        argMax(confidence, version) AS conf, argMax(n_import, version) AS ni, argMax(n_export, version) AS ne
    FROM priced_buckets
    WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
        AND (device_id != '') = @devices AND direction = @dir
        AND day >= toDate(@d0) AND day <= toDate(@d1)
        AND span_from = transform(toUInt32(day), @span_days, @span_from, toUInt32(0))
        AND span_to = transform(toUInt32(day), @span_days, @span_to, toUInt32(0))
    GROUP BY location_id, device_id, day
)
GROUP BY location_id, device_id, month_number
